"""``load_volatile(array, i)``: an int64 load that is never cached, merged or hoisted, for polling a
word that another block writes (compiled CUDA only; the simulator reads the array directly).

It emits ``ld.volatile.global.b64`` as inline assembly with side effects: LLVM may not move it out
of a loop or merge two of them, and ``.volatile`` skips L1 (which is not coherent between SMs),
so each poll reads L2. numba-cuda 0.30's own ``cuda.ldcv`` emits ``ld.global.cv`` but as inline
assembly without side effects (``numba/cuda/cache_hints.py``), which LLVM may hoist out of a spin
loop, and the simulator has no ``ldcv`` at all. One aligned 64-bit load is single-copy atomic
(PTX ISA, memory consistency model), so a word written by an atomic is read whole.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.cuda import cgutils
from numba.cuda.extending import intrinsic


@intrinsic
def load_volatile(typingctx, array, index):
    """``array[index]`` (a 1-D C-contiguous int64 array or an int64 pointer, an integer index, no
    bounds check) by ``ld.volatile.global.b64``."""
    pointer = isinstance(array, types.CPointer) and array.dtype == types.int64
    if not (pointer or (isinstance(array, types.Array) and array.dtype == types.int64
                        and array.ndim == 1)) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        array_type, index_type = sig.args
        arr, idx = args
        idx = context.cast(builder, idx, index_type, types.intp)
        if pointer:
            ptr = builder.gep(arr, [idx])
        else:
            ary = context.make_array(array_type)(context, builder, arr)
            ptr = cgutils.get_item_pointer(context, builder, array_type, ary, [idx],
                                           wraparound=False)
        fn = ir.FunctionType(ir.IntType(64), [ptr.type])
        asm = ir.InlineAsm(fn, "ld.volatile.global.b64 $0, [$1];", "=l,l,~{memory}",
                           side_effect=True)
        return builder.call(asm, [ptr])

    return types.int64(array, index), codegen
