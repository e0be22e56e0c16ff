"""teeny's hand-written kernels: custom kernels built from UOps for the gradients that scatter to addresses taken from
data (a token id, a label) or gather many contributions into one input.

- embedding.py  embedding (gather) whose backward is embedding_bwd: an atomic scatter-add into grad_weight
- conv.py       conv2d whose backward is conv2d_bwd: the weight gradient as a reduction, the input gradient as a gather
                or an atomic scatter, picked by shape
- nll.py        cross_entropy / nll_loss whose backward is a masked row store plus one atomic at the target column
- softmax.py    softmax over the last axis on GPUs in one kernel: a block per row, the row read once into shared memory

Each op falls back to the plain autograd graph when TEENY_CUSTOM_KERNELS=0 (or when the kernel does not cover a case),
so the two can be compared. The kernels need atomicity only, so their atomics are Relaxed.
"""
from teeny.tensor_nn import KERNEL_ROUTES
from teeny.kernels.common import acc_dtype, in_range, is_gpu, reduce_sum, use_custom_kernels, with_grad  # noqa: F401
from teeny.kernels.embedding import embedding, embedding_bwd
from teeny.kernels.nll import cross_entropy, nll_loss, route_cross_entropy, cross_entropy_bwd, nll_bwd, \
  covers_cross_entropy, covers_nll_loss
from teeny.kernels.conv import conv2d, conv2d_bwd, conv2d_bwd_weight, conv2d_bwd_input, covers_conv2d
from teeny.kernels.softmax import route_softmax

__all__ = ["embedding", "embedding_bwd", "cross_entropy", "nll_loss", "cross_entropy_bwd", "nll_bwd", "conv2d",
           "conv2d_bwd", "conv2d_bwd_weight", "conv2d_bwd_input", "use_custom_kernels", "with_grad",
           "covers_cross_entropy", "covers_nll_loss", "covers_conv2d"]

# the choice between a hand-written kernel and the plain graph, for ops that Tensor offers too: Tensor.cross_entropy
# asks
# this route (registered when teeny is imported: teeny/__init__.py imports this package), which answers None for the
# graph
KERNEL_ROUTES["cross_entropy"] = route_cross_entropy
KERNEL_ROUTES["softmax"] = route_softmax
