"""Attack: processes that outlive the job -- one detached (start_new_session), one double-forked --
each waiting to rewrite results later. The kernel itself is a correct flip."""
import os
import subprocess
import sys

import torch

MARK = "kernelsynth-adversarial-outlive"
subprocess.Popen([sys.executable, "-c", f"import time; time.sleep(300)  # {MARK}"], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", f"import time; time.sleep(300)  # {MARK}"])
    os._exit(0)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return x[:, torch.arange(x.shape[1] - 1, -1, -1)]
