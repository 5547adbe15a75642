# A copy of tests/adversarial/cpu/honest/index.py: the victim of hidden_leader_kill.py (a spec candidate after it).
import torch
class ModelNew(torch.nn.Module):
    def __init__(self, **kw): super().__init__()
    def forward(self, x):
        N = x.shape[1]
        return x[:, torch.arange(N - 1, -1, -1, device=x.device)]
