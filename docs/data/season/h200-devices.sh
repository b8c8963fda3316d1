#!/usr/bin/env bash
# shard's GPU run: the season's blocks dealt to every GPU (TestSeasonDevices
# over a random cube, bit for bit against one device), the command line's
# composite and monitor with --devices 1, 2 (where there are two) and all:
# the files must be equal; and monitor by parts (--shard, batch's merge) on
# cuda equal to the whole run.
set -u
cd "$(dirname "$0")"
here=$PWD
ngpu=$(nvidia-smi -L | grep -c '^GPU')
export CANOPY_EXPECT_GPU=1 CANOPY_EXPECT_DEVICES=${CANOPY_EXPECT_DEVICES:-$ngpu}
export LD_LIBRARY_PATH=$here/bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PROJ_DATA=$here/bin/proj
nvidia-smi -L
echo "GPUs: $ngpu"
fail=0
bin/cudaback.test -test.run 'TestSeasonDevices$|TestSeasonGPU$' -test.v -test.count=1 > go.log 2>&1 || { echo "GO TESTS FAILED"; fail=1; }
grep -v '^=== RUN' go.log | grep -v '^    --- PASS' | tail -40
W=$(mktemp -d)
devs="1 all"; [ "$ngpu" -ge 2 ] && devs="1 2 all"
for d in $devs; do
  bin/canopy-nogui composite stack/*.tif --bands red=1,nir=2 --period 2019/2020 --stat median --backend cuda --devices $d --tif $W/c$d.tif --json || fail=1
  bin/canopy-nogui monitor stack/*.tif --bands red=1,nir=2 --history 2019/2019 --monitor 2020/ --harmonics 1 --backend cuda --devices $d --tif $W/m$d.tif --json || fail=1
done
for k in c m; do
  for d in $devs; do [ $d = 1 ] && continue; cmp $W/${k}1.tif $W/${k}$d.tif && echo "$k: --devices $d equals --devices 1" || { echo "$k: --devices $d DIFFERS"; fail=1; }; done
done
bin/canopy-nogui composite stack/*.tif --bands red=1,nir=2 --period 2019/2020 --backend cuda --devices 9 --tif $W/x.tif; echo "--devices 9: exit $? (want 2, one line)"
# Parts on cuda, merged by batch: the whole run's file.
for i in 2 0 1; do
  bin/canopy-nogui batch --out $W/parts --shard $i/3 monitor stack/*.tif --bands red=1,nir=2 --history 2019/2019 --monitor 2020/ --harmonics 1 --backend cuda --tif m.tif || fail=1
done
cmp $W/m1.tif $W/parts/m.tif && echo "monitor: 3 parts merged by batch equal the whole run" || { echo "monitor: merged parts DIFFER"; fail=1; }
rm -rf "$W"
echo "shard GPU run: $([ $fail -eq 0 ] && echo OK || echo FAILED)"
exit $fail
