"""Compile conv_relu_maxpool v7 with NVRTC on a machine without a GPU (what the harness compiles on the
H200: kernelsynth/backends/cuda.py's options -std=c++17 -arch=sm_90a -D...), all 8 builds and the three
diagnosis builds, printing ptxas's registers / spills and any injected-wait advisory (C7517).

NVRTC is not installed here; fetch its wheel once (an ignored folder):
    python3 -m pip download --no-deps -d /tmp/nvrtc nvidia-cuda-nvrtc==13.5.37
    (cd /tmp/nvrtc && unzip -o -q nvidia_cuda_nvrtc-*.whl -d x)
then:  python3 bench/nvrtc_check_v7.py [/tmp/nvrtc/x/nvidia/cu13/lib/libnvrtc.so.13]
Session of 2026-12-05 (NVRTC 13.5): every build compiled, 0 spills, registers 120-128 (BN = 64) and
214-254 (BN = 128), no C7517. Session 17 on the H200 (its NVRTC 13.0, nvidia/cu13/lib/libnvrtc.so.13): every build
compiled, registers 118-128 / 215-254, bfloat16 BN = 64 ROWS = 2 spills 4 bytes (so exit 1).
Exit 1 when a build fails or spills.
"""

import ctypes
import itertools
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "specs" / "conv_relu_maxpool" / "kernels" / "v7_wgmma_ss.cu"


def main(libpath: str) -> int:
    lib = ctypes.CDLL(libpath)
    src = SRC.read_bytes()

    def build(macros):
        prog = ctypes.c_void_p()
        assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"v7_wgmma_ss.cu", 0, None, None) == 0
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
    builds = [[f"KS_T={t}", f"BN={bn}", f"ROWS={r}"] for t, bn, r in
              itertools.product(["float", "__nv_bfloat16"], [64, 128], [2, 4])]
    builds += [["KS_T=float", "BN=64", "ROWS=2", m] for m in ("V7_DESC_SWAP=1", "V7_DESC_SWAP=3", "V7_WAIT0=1")]
    for macros in builds:
        rc, log = build(macros)
        regs = re.search(r"Used (\d+) registers", log)
        spills = re.search(r"(\d+) bytes spill stores", log)
        ok = rc == 0 and spills and spills.group(1) == "0" and "C7517" not in log
        bad += not ok
        print(" ".join(macros), "rc", rc, "registers", regs and regs.group(1), "spill stores",
              spills and spills.group(1), "C7517" if "C7517" in log else "", "" if ok else log[-1500:])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/nvrtc/x/nvidia/cu13/lib/libnvrtc.so.13"))
