"""Issue 42, item 1 (design study, CPU, float64): how far above each key row's largest |dKV|
element the per-row bounds a 32-bit fixed-point scatter could take its scale from lie, and
the error such lanes reach next to fp32 atomics. Usage: python3 bench/det_bound_study.py S H TOPK [SEED]
(S = Skv, D = 576 with V the first 512, random distinct keys, dO of unequal size per token).
Results and the conclusion: bench/NOTES.md, "32-bit lanes for the deterministic mode"."""
import torch, math, sys
torch.manual_seed(int(sys.argv[4]) if len(sys.argv) > 4 else 0)
S=Skv=int(sys.argv[1]); H=int(sys.argv[2]); K=int(sys.argv[3]); D=576; DV=512
q=torch.randn(S,H,D,dtype=torch.float64)
kv=torch.randn(Skv,D,dtype=torch.float64)
do=torch.randn(S,H,DV,dtype=torch.float64)*torch.rand(S,1,1,dtype=torch.float64)*4   # tokens' gradients of unequal size
idx=torch.stack([torch.randperm(Skv)[:K] for _ in range(S)])
sm=1/math.sqrt(D)
dkv=torch.zeros(Skv,D,dtype=torch.float64)
M=torch.zeros(Skv,dtype=torch.float64); KLb=torch.zeros(Skv,dtype=torch.float64)
AP=torch.zeros(Skv,dtype=torch.float64)   # a priori: P <= 1, Cauchy-Schwarz on dP
contrib=[]
vn=kv[:,:DV].norm(dim=-1)
for s0 in range(0,S,128):
    sl=slice(s0,s0+128); ii=idx[sl]
    k=kv[ii]; v=k[...,:DV]
    s=torch.einsum('shd,skd->shk',q[sl],k)*sm
    p=torch.softmax(s,-1)
    o=torch.einsum('shk,skd->shd',p,v)
    dp=torch.einsum('shd,skd->shk',do[sl],v)
    delta=(do[sl]*o).sum(-1,keepdim=True)
    ds=p*(dp-delta)
    c=torch.einsum('shk,shd->skd',ds,q[sl])*sm
    c[...,:DV]+=torch.einsum('shk,shd->skd',p,do[sl])
    dkv.index_add_(0,ii.reshape(-1),c.reshape(-1,D))
    M.index_add_(0,ii.reshape(-1),c.abs().amax(-1).reshape(-1))
    al=do[sl].abs().amax(-1); be=sm*q[sl].abs().amax(-1); dn=do[sl].norm(dim=-1)
    U=(al+be*delta[...,0].abs()).amax(1); W=(be*dn).amax(1)     # per token, max over heads
    AP.index_add_(0,ii.reshape(-1),(al.unsqueeze(-1)+be.unsqueeze(-1)*(dn.unsqueeze(-1)*vn[ii].unsqueeze(1)+delta.abs())).sum(1).reshape(-1))
    kl=p.sum(1)                                                 # sum over heads of P: H * kl_target
    KLb.index_add_(0,ii.reshape(-1),(kl*(U.unsqueeze(-1)+vn[ii]*W.unsqueeze(-1))).reshape(-1))
    contrib.append((ii,c.float()))
rowmax=dkv.abs().amax(-1)
for name,b in [('M: sum of the CTAs\' row maxima',M),('a priori (P <= 1)',AP),('KL target x per-token weights',KLb)]:
    r=(b/rowmax).log2()
    print(f'{name:34s} log2(bound/rowmax): median {r.median():.1f} max {r.max():.1f}')
# 31-bit lanes at the KL bound's power-of-two scale, against fp32 atomics in a random order.
scale=torch.exp2(torch.floor(30-torch.log2(KLb)))
fix=torch.zeros(Skv,D,dtype=torch.float64); f32=torch.zeros(Skv,D,dtype=torch.float32)
order=torch.randperm(len(contrib))
for i in order.tolist():
    ii,c=contrib[i]
    for j in torch.randperm(ii.shape[0]).tolist():
        rows=ii[j]; cj=c[j]
        fix.index_add_(0,rows,torch.round(cj.double()*scale[rows,None]))
        f32.index_add_(0,rows,cj)
fix=fix/scale[:,None]
assert (fix.abs()*scale[:,None]).max() < 2**31
def err(x): return ((x.double()-dkv).abs().amax(-1)/rowmax).log2()
print(f'fixed-point lanes: max error / rowmax: median 2^{err(fix).median():.1f}, worst 2^{err(fix).max():.1f}')
print(f'fp32 atomics    : max error / rowmax: median 2^{err(f32).median():.1f}, worst 2^{err(f32).max():.1f}')
cos=lambda x: torch.nn.functional.cosine_similarity(x.double().flatten(),dkv.flatten(),0).item()
print(f'cosine: fixed {cos(fix):.12f}  fp32 {cos(f32):.12f}  bf16(exact) {cos(dkv.bfloat16()):.9f}')
