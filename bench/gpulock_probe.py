"""Why can a sandboxed worker not open its GPU's lock file? (issue 16's H200 runs: every GPU job
logged "the lock file in the cache could not be opened"). On the GPU machine, from the repo root:

    . bench/device_env.sh; python3 bench/gpulock_probe.py

Prepares the lock as a run does (kernelsynth.gpulock.prepare under $KERNELSYNTH_CACHE), then opens
it in a child three ways -- plain, in bubblewrap as the run's workers are (Sandbox.command), and in
bubblewrap after enter_worker's uid drop -- printing the path, the outcome and the errno of each."""

import json
import os
import subprocess
import sys
from pathlib import Path

from kernelsynth import gpulock
from kernelsynth.sandbox import Sandbox


def main():
    import torch  # the parent initialises CUDA here: a probe, not the engine
    root = Path(os.environ.get("KERNELSYNTH_CACHE", "/tmp/kcache")).resolve()
    uuid = str(torch.cuda.get_device_properties(0).uuid)
    paths = gpulock.prepare(root, [uuid])
    print("prepared", paths, oct(root.stat().st_mode), [oct(p.stat().st_mode) for p in paths])
    sb = Sandbox(hidden=[], readable=[str(Path.cwd())], private=[], gpu=True, cache=str(root))
    limits = sb.limits()
    print("sandbox", sb.status, "uid", limits.get("uid"))
    code = ("import json,os,sys\n"
            "lim=json.loads(sys.argv[1])\n"
            "if sys.argv[2]=='drop':\n from kernelsynth.sandbox import enter_worker; enter_worker(lim)\n"
            "from kernelsynth import gpulock\n"
            "p=gpulock.worker_lock_path(); print('uid',os.getuid(),'path',p, 'env', os.environ.get('KERNELSYNTH_CACHE'))\n"
            "try:\n fd=os.open(p, os.O_RDONLY); print('open ok'); import fcntl; fcntl.flock(fd, fcntl.LOCK_SH); print('flock ok')\n"
            "except Exception as e: print('FAILED', type(e).__name__, e)\n"
            "print('listing', os.listdir(os.path.dirname(p)) if p else None)\n")
    env = dict(os.environ, KERNELSYNTH_CACHE=str(root))
    for how in ("plain", "bwrap", "drop"):
        argv = [sys.executable, "-c", code, json.dumps(limits), how]
        cmd = argv if how == "plain" else sb.command(argv, limits)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
        print(f"== {how}: rc {r.returncode}\n{r.stdout[-1500:]}{r.stderr[-1500:]}")


if __name__ == "__main__":
    main()
