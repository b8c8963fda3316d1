package gl

// OpenGL enumerants used by Canopy, with the values of the Khronos
// registry (gl.xml).
const (
	FALSE = 0

	// Errors.
	NO_ERROR                      = 0
	INVALID_ENUM                  = 0x0500
	INVALID_VALUE                 = 0x0501
	INVALID_OPERATION             = 0x0502
	OUT_OF_MEMORY                 = 0x0505
	INVALID_FRAMEBUFFER_OPERATION = 0x0506

	// Context queries.
	VENDOR                   = 0x1F00
	RENDERER                 = 0x1F01
	VERSION                  = 0x1F02
	EXTENSIONS               = 0x1F03
	NUM_EXTENSIONS           = 0x821D
	MAJOR_VERSION            = 0x821B
	MINOR_VERSION            = 0x821C
	CONTEXT_PROFILE_MASK     = 0x9126
	CONTEXT_CORE_PROFILE_BIT = 0x00000001

	// Shaders and programs.
	COMPUTE_SHADER                         = 0x91B9
	COMPILE_STATUS                         = 0x8B81
	LINK_STATUS                            = 0x8B82
	INFO_LOG_LENGTH                        = 0x8B84
	COMPUTE_WORK_GROUP_SIZE                = 0x8267
	MAX_COMPUTE_WORK_GROUP_COUNT           = 0x91BE
	MAX_SHADER_STORAGE_BLOCK_SIZE          = 0x90DE
	SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT = 0x90DF
	SHADER_STORAGE_BUFFER                  = 0x90D2

	// Timer queries.
	TIMESTAMP          = 0x8E28
	QUERY_COUNTER_BITS = 0x8864
	QUERY_RESULT       = 0x8866

	// Buffers.
	COPY_READ_BUFFER    = 0x8F36
	COPY_WRITE_BUFFER   = 0x8F37
	MAP_READ_BIT        = 0x0001
	MAP_WRITE_BIT       = 0x0002
	MAP_PERSISTENT_BIT  = 0x0040
	MAP_COHERENT_BIT    = 0x0080
	DYNAMIC_STORAGE_BIT = 0x0100
	CLIENT_STORAGE_BIT  = 0x0200
	R32F                = 0x822E
	RED                 = 0x1903
	FLOAT               = 0x1406

	// Synchronisation.
	SYNC_GPU_COMMANDS_COMPLETE       = 0x9117
	SYNC_FLUSH_COMMANDS_BIT          = 0x00000001
	ALREADY_SIGNALED                 = 0x911A
	TIMEOUT_EXPIRED                  = 0x911B
	CONDITION_SATISFIED              = 0x911C
	WAIT_FAILED                      = 0x911D
	BUFFER_UPDATE_BARRIER_BIT        = 0x00000200
	CLIENT_MAPPED_BUFFER_BARRIER_BIT = 0x00004000
)
