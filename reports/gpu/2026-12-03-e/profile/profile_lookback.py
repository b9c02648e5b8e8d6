"""Where the Triton planner's look-back launch spends its time: a few eager launches for Nsight
Compute (``ncu``) to profile, at bs 1024 and 4096 on the suite's serving workload, beside the chain
floor at its fastest shape (BLOCK 64, 2 warps).

    ncu --set full --import-source yes -k regex:'roles_lookback|chain' -c 4 -o OUT/prof \
        python reports/gpu/2026-12-03-e/profile/profile_lookback.py

Each launch is followed by a synchronize; ncu serialises kernels and flushes caches between them
by default, so its durations are cold-cache figures, not the replay figures of the bench.
"""

import torch

from impls.offsets_planner import triton_planner
from impls.offsets_planner.harness.sweeps import one_pass, one_pass_calls

device = torch.device("cuda", torch.cuda.current_device())
for bs in (1024, 4096):
    kw = one_pass.workload(bs, device)
    triton_planner.launch(**kw)  # compile, prepare (the first launch of a key)
    torch.cuda.synchronize()
    triton_planner.launch(**kw)  # the fast launch: what ncu profiles
    torch.cuda.synchronize()
    chain = one_pass_calls._triton_chain(64, 2)(kw)
    chain()
    torch.cuda.synchronize()
