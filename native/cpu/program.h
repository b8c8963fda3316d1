/* Canopy's C block interpreter: runs a compiled index program
 * (compute/index.Program) over a span of pixels, op by op over blocks of
 * CANOPY_BLOCK pixels that stay in the core's L1/L2 cache, each op one
 * vectorised pass (AVX2 chosen at run time on x86-64, portable C
 * elsewhere). The arithmetic is index.Program.Eval32's exactly: one float32
 * rounding per op, no fused multiply-add, NaN where a division's denominator
 * is zero, min and max NaN-propagating, the result NaN where not finite.
 * One call runs on one thread; the c backend gives each worker its own
 * scratch and one call per span. */
#ifndef CANOPY_PROGRAM_H
#define CANOPY_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

/* CANOPY_BLOCK is the number of pixels each op handles at a time. */
#define CANOPY_BLOCK 1024

/* CANOPY_MAX_REGS is the most registers a program may use. */
#define CANOPY_MAX_REGS 1024

/* The ops, numbered as compute/index.Op. */
enum {
	CANOPY_OP_LOAD,
	CANOPY_OP_CONST,
	CANOPY_OP_ADD,
	CANOPY_OP_SUB,
	CANOPY_OP_MUL,
	CANOPY_OP_DIV,
	CANOPY_OP_NEG,
	CANOPY_OP_ABS,
	CANOPY_OP_SQRT,
	CANOPY_OP_MIN,
	CANOPY_OP_MAX,
	CANOPY_OP_ADDK,
	CANOPY_OP_SUBK,
	CANOPY_OP_KSUB,
	CANOPY_OP_MULK,
	CANOPY_OP_DIVK,
	CANOPY_OP_KDIV,
	CANOPY_OP_MINK,
	CANOPY_OP_MAXK,
	CANOPY_OP_FINITE,
	CANOPY_NUM_OPS,
	/* Fused ops the Go side forms from the program (not index.Ops):
	 * r[dst] = (r[a] - r[b]) / (r[a] + r[b]), NaN where the sum is zero,
	 * with the roundings of the sub, add and div it replaces. */
	CANOPY_OP_ND = CANOPY_NUM_OPS,
	/* An nd whose result only a storing finite reads, and that finite:
	 * writes finite(nd(r[a], r[b])) straight to the outputs whose outat
	 * is this instruction (store is always set). */
	CANOPY_OP_ND_STORE,
	CANOPY_NUM_OPS_ALL
};

/* The stored sample types, numbered as compute.DataType. */
enum {
	CANOPY_U8 = 1,
	CANOPY_U16,
	CANOPY_I16,
	CANOPY_U32,
	CANOPY_I32,
	CANOPY_F32
};

/* Band flags. A float32 band with neither is read in place: the load's
 * register is the band itself (whole vectors only). */
enum {
	CANOPY_RADIOMETRY = 1, /* v = ((x + add) * scale) + offset, three roundings */
	CANOPY_NODATA = 2      /* NaN where the sample equals nodata */
};

/* One instruction: r[dst] = op(r[a], r[b], k); for a load, a is the band.
 * A finite with store set does not write r[dst]: it writes finite(r[a])
 * straight to the outputs whose outat is this instruction (no later
 * instruction reads r[dst]). */
typedef struct {
	uint8_t op;
	uint8_t store;
	uint16_t dst, a, b;
	float k;
} canopy_instr;

/* One input band: its whole plane and how to convert it. */
typedef struct {
	const void *data;
	int32_t type;
	int32_t flags;
	float add, scale, offset;
	/* The nodata sample as its 32-bit lane: the integer value (uint8,
	 * uint16, int16 and int32 as int32; uint32 as its bits) or the
	 * float32's bits. */
	uint32_t nodata;
} canopy_band;

/* A job: the program, its bands, its output planes and the mask. */
typedef struct {
	const canopy_instr *code;
	const canopy_band *bands;
	float *const *out;      /* nout planes */
	const int32_t *outregs; /* the register of each output */
	const int32_t *outat;   /* the storing finite of each output, or -1:
				 * stored from its register after the code */
	const uint8_t *mask;    /* NULL, or one byte per pixel: non-zero masks */
	int32_t ncode, nregs, nbands, nout;
	int32_t stream;         /* write the outputs with streaming stores */
} canopy_program;

/* canopy_program_scratch is how many floats of scratch a call needs
 * (the registers, each CANOPY_BLOCK floats; 32-byte aligned). */
size_t canopy_program_scratch(int32_t nregs);

/* canopy_program_run runs p over pixels [lo, hi). It returns 0, or -1 for
 * an op or sample type it does not know (nothing is written then). */
int canopy_program_run(const canopy_program *p, float *scratch, size_t lo,
		       size_t hi);

/* canopy_program_isa names the instruction set the interpreter uses. */
const char *canopy_program_isa(void);

/* canopy_program_use_scalar(1) switches to the portable C ops, (0) back to
 * the best for this CPU; only while no thread runs a program (CANOPY_NOSIMD,
 * tests). */
void canopy_program_use_scalar(int scalar);

#endif
