#!/usr/bin/env python3
"""Red-team regression (issue 12 follow-up): tenure-report's private copy of a cut stream file
must hold no more than the trace directory does.

A hostile trace: one real packet whose packet_size claims 4 GiB, over a sparse file that holds
4 KiB, cut 40 bytes after; plus 50 hard links to it. The copy used to write the whole hole,
once per name (here 200 GiB; a terabyte packet filled TMPDIR for hours before any --timeout).
The test watches the blocks the copy takes in TMPDIR while tenure-report runs and kills it
past 64 MiB (the old copy gets there within a second); the fixed one keeps holes and copies
each inode once, and gives the partial report (exit 3).

usage: report_sparse_copy.py TENURE_REPORT WORKLOAD WORKDIR
"""
import glob, os, shutil, struct, subprocess, sys, time

report, workload, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env = dict(os.environ, TENURE_TRACE=os.path.join(work, "trace"))
subprocess.run([workload], env=env, check=True, stdout=subprocess.DEVNULL)
src = glob.glob(os.path.join(work, "trace", "tenure-*", "64-bit"))[0]
streams = sorted(glob.glob(os.path.join(src, "channel0_*")))
packet = bytearray(open(streams[0], "rb").read(4096))
hostile = os.path.join(work, "hostile")
os.makedirs(hostile)
shutil.copy(os.path.join(src, "metadata"), hostile)
size = 4 << 30
struct.pack_into("<Q", packet, 56, size * 8)  # packet_size (bits, after a 32-byte header): the whole file
with open(os.path.join(hostile, "channel0_0"), "wb") as f:
    f.write(packet)
    f.truncate(size + 40)  # a hole, then 40 bytes of a cut packet
for i in range(1, 51):
    os.link(os.path.join(hostile, "channel0_0"), os.path.join(hostile, "channel0_%d" % i))
tmp = os.path.join(work, "tmp")
os.makedirs(tmp)


def blocks(d):
    n = 0
    for root, _, files in os.walk(d):
        for f in files:
            try:
                n += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return n


t0 = time.time()
p = subprocess.Popen([report, hostile], env=dict(os.environ, TMPDIR=tmp), stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE, text=True)
most = 0
while p.poll() is None and time.time() - t0 < 120:
    most = max(most, blocks(tmp))
    if most > (64 << 20):
        break
    time.sleep(0.01)
if p.poll() is None:
    p.kill()
err = p.communicate()[1]
took = time.time() - t0
print(err.strip())
print("exit %s in %.1f s; the copy took up to %d bytes" % (p.returncode, took, most))
ok = p.returncode == 3 and "cut packet" in err and most <= (64 << 20) and os.listdir(tmp) == []
print("PASS" if ok else "FAIL: expected the partial report (exit 3), a small copy, and an empty TMPDIR afterwards")
shutil.rmtree(work, ignore_errors=True)
sys.exit(0 if ok else 1)
