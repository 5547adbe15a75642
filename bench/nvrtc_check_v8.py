"""Compile conv_relu_maxpool v8 with NVRTC (what the harness compiles on the H200: kernelsynth/backends/cuda.py's
options -std=c++17 -arch=sm_90a -D...), its 4 builds and one with the watchdog off, printing ptxas's registers /
spills and any performance advisory: C7508 (setmaxnreg ignored: the consumers would keep 168 registers and
spill), C7512 / C7514 (serialized wgmma), C7517 (an injected wgmma wait). Modelled on bench/nvrtc_check_v7.py.

On the CPU machine (no NVRTC installed; fetch its wheel once into an ignored folder):
    python3 -m pip download --no-deps -d /tmp/nvrtc nvidia-cuda-nvrtc==13.5.37
    (cd /tmp/nvrtc && unzip -o -q nvidia_cuda_nvrtc-*.whl -d x)
then:  python3 bench/nvrtc_check_v8.py [/tmp/nvrtc/x/nvidia/cu13/lib/libnvrtc.so.13]
(bench/h200_v8.sh runs it with the device's own NVRTC.) Exit 1 when a build fails, spills or has an advisory.
"""

import ctypes
import itertools
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "specs" / "conv_relu_maxpool" / "kernels" / "v8_wgmma_async.cu"
ADVISORIES = ("C7508", "C7512", "C7514", "C7517")


def main(libpath: str) -> int:
    lib = ctypes.CDLL(libpath)
    src = SRC.read_bytes()
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    print(f"NVRTC {major.value}.{minor.value} ({libpath})")

    def build(macros):
        prog = ctypes.c_void_p()
        assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"v8_wgmma_async.cu", 0, None, None) == 0
        opts = [b"-std=c++17", b"-arch=sm_90a", b"-I/usr/local/cuda/include", b"--ptxas-options=-v"]
        opts += [f"-D{m}".encode() for m in macros]
        rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return rc, log.value.decode(errors="replace")

    bad = 0
    builds = [[f"KS_T={t}", f"BN={bn}"] for t, bn in itertools.product(["float", "__nv_bfloat16"], [64, 128])]
    builds += [["KS_T=__nv_bfloat16", "BN=128", "V8_WATCHDOG=0"]]
    for macros in builds:
        rc, log = build(macros)
        regs = re.search(r"Used (\d+) registers", log)
        spills = re.search(r"(\d+) bytes spill stores", log)
        adv = [a for a in ADVISORIES if a in log]
        ok = rc == 0 and spills and spills.group(1) == "0" and not adv
        bad += not ok
        print(" ".join(macros), "rc", rc, "registers", regs and regs.group(1), "spill stores",
              spills and spills.group(1), " ".join(adv), "" if ok else log[-1500:])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/nvrtc/x/nvidia/cu13/lib/libnvrtc.so.13"))
