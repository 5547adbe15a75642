import torch, torch.nn.functional as F
from kernelsynth.verify.guard import numeric_flags
torch.manual_seed(0)
x=torch.randn(300,1000); w=torch.randn(1000,129)/32
q=torch.randn(2,3,37,128); k=torch.randn(2,3,37,128); v=torch.randn(2,3,37,128)
xc=torch.randn(2,64,31,30); wc=torch.randn(128,64,3,3)/24
big=torch.randn(300,4099)
def run():
    return dict(mm=x@w, conv=F.conv2d(xc,wc,padding=1), sdpa=F.scaled_dot_product_attention(q,k,v,is_causal=True), sum=big.sum(1), sm=torch.softmax(big,-1), ln=F.layer_norm(big,(4099,)))
def err(a):
    ref = dict(mm=x.double()@w.double(), conv=F.conv2d(xc.double(),wc.double(),padding=1), sdpa=F.scaled_dot_product_attention(q.double(),k.double(),v.double(),is_causal=True), sum=big.double().sum(1), sm=torch.softmax(big.double(),-1), ln=F.layer_norm(big.double(),(4099,)))
    return {n:(a[n].double()-ref[n]).abs().max().item() for n in a}
base=run(); f0=numeric_flags()
def knob(name, on, off):
    on(); r=run(); fl=[k for k,v in numeric_flags().items() if f0[k]!=v]; off()
    diff={n: ('dtype '+str(r[n].dtype)) if r[n].dtype!=base[n].dtype else ('bits differ' if not torch.equal(r[n],base[n]) else 'same') for n in r}
    e=err(r)
    print(f"{name}: guard sees {fl or 'nothing'}\n   " + ", ".join(f"{n}:{diff[n]} err {e[n]:.2e}" for n in r))
print("base err", {n:f"{v:.2e}" for n,v in err(base).items()})
knob("autocast cpu bf16", lambda: torch.set_autocast_enabled('cpu',True), lambda: torch.set_autocast_enabled('cpu',False))
knob("autocast cpu fp16", lambda: (torch.set_autocast_dtype('cpu',torch.float16),torch.set_autocast_enabled('cpu',True)), lambda: (torch.set_autocast_enabled('cpu',False),torch.set_autocast_dtype('cpu',torch.bfloat16)))
n=torch.get_num_threads()
knob("set_num_threads(1)", lambda: torch.set_num_threads(1), lambda: torch.set_num_threads(n))
knob("nnpack off", lambda: torch._C._set_nnpack_enabled(False), lambda: torch._C._set_nnpack_enabled(True))
knob("mkldnn deterministic", lambda: torch._C._set_mkldnn_deterministic(True), lambda: torch._C._set_mkldnn_deterministic(False))
knob("onednn_allow_tf32", lambda: torch._C._set_onednn_allow_tf32(True), lambda: torch._C._set_onednn_allow_tf32(False))
m=torch.backends.mkldnn.matmul
knob("mkldnn.matmul bf16 then .backend='cuda' (misreport)", lambda: (setattr(m,'fp32_precision','bf16'), setattr(m,'backend','cuda')), lambda: (setattr(m,'backend','mkldnn'), setattr(m,'fp32_precision','none')))
c=torch.backends.mkldnn.conv
knob("mkldnn.conv bf16 then .backend='cuda' (misreport)", lambda: (setattr(c,'fp32_precision','bf16'), setattr(c,'backend','cuda')), lambda: (setattr(c,'backend','mkldnn'), setattr(c,'fp32_precision','none')))
knob("mkldnn.matmul tf32", lambda: setattr(m,'fp32_precision','tf32'), lambda: setattr(m,'fp32_precision','none'))
knob("opt_einsum off", lambda: setattr(torch.backends.opt_einsum,'enabled',False), lambda: setattr(torch.backends.opt_einsum,'enabled',True))
print(torch._C._get_sdp_priority_order() if hasattr(torch._C,'_get_sdp_priority_order') else 'no getter')
