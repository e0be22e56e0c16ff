"""The README's table of every public Tensor method and attribute, with its PyTorch name where that differs.

  python3 extra/api_table.py           print the table (markdown)
  python3 extra/api_table.py --write   replace the table section at the end of README.md
  python3 extra/api_table.py --check   exit 1 if README.md's table is stale (for CI)

The list comes from dir(Tensor), so a new method shows up by itself; a name torch.Tensor also has is marked "same". The
notes below say where the torch spelling differs (a torch.nn.functional function, another name) or the semantics do.
Needs torch installed (only to look names up)."""
from __future__ import annotations
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from teeny import Tensor

HEADING = "## Tensor API and the torch names"
README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")

# teeny name -> (torch spelling, note); "" as the spelling means torch has no counterpart
TORCH: dict[str, tuple[str, str]] = {
  "add": ("add", "also `reverse=`"), "sub": ("sub", "also `reverse=`"), "mul": ("mul", "also `reverse=`"),
  "div": ("div", "`rounding_mode=` as torch; int // 0 gives 0 (torch raises), see div's docstring"),
  "floordiv": ("floor_divide", ""), "mod": ("remainder", "int % 0 gives 0 (torch raises)"),
  "cmplt": ("lt", ""), "lshift": ("bitwise_left_shift", "or `<<`"), "rshift": ("bitwise_right_shift", "or `>>`"),
  "clip": ("clamp", "torch has `clip` too"),
  "max": ("max", "values only (torch's max(dim) returns (values, indices)); gradient to the first maximal element "
          "for one dim, split among ties otherwise, as torch"),
  "min": ("min", "values only; gradient as `max`"),
  "sum": ("sum", "`axis=` or `dim=`"), "mean": ("mean", "an int tensor's mean is a float (torch refuses)"),
  "dot": ("dot", "1-D as torch; other ranks are matmul (tinygrad)"),
  "cast": ("to(dtype)", ""), "bitcast": ("view(dtype)", ""), "assign": ("copy_", "lazy; see docs/architecture.md"),
  "replace": ("", "swap in another tensor's graph"), "shrink": ("narrow / slicing", "one (start, end) per dim"),
  "pad": ("torch.nn.functional.pad", "pairs per dim or torch's flat tuple"),
  "linear": ("torch.nn.functional.linear", "weight is (in, out), as tinygrad; torch's is (out, in)"),
  "cat": ("torch.cat", "also a method"), "stack": ("torch.stack", "also a method"),
  "einsum": ("torch.einsum", ""), "realize": ("", "run the kernels now"),
  "realize_all": ("", "realize several at once"),
  "schedule": ("", "the kernels a realize would run"),
  "contiguous_backward": ("", "identity; its gradient gets its own buffer (tinygrad)"),
  "custom_kernel": ("", "a hand-written kernel in the graph"),
  "host_range": ("", "min/max of host-made int data, free"), "uop": ("", "the graph node"),
  "gradient": ("torch.autograd.grad", ""), "train": ("module.train()", "a mode for a block"),
  "test": ("module.eval()", "a mode for a block"), "training": ("", "this thread's training mode"),
  "data": ("data", "a memoryview of the values (torch: a tensor)"),
  "numel": ("numel", ""), "softmin": ("torch.nn.functional.softmin", ""),
  "normalize": ("torch.nn.functional.normalize", ""), "one_hot": ("torch.nn.functional.one_hot", "int32 result"),
  "swish": ("torch.nn.functional.silu", ""), "quick_gelu": ("", "x * sigmoid(1.702 x)"),
  "sparse_categorical_crossentropy": ("torch.nn.functional.cross_entropy", "integer labels"),
  "binary_crossentropy": ("torch.nn.functional.binary_cross_entropy", ""),
  "binary_crossentropy_logits": ("torch.nn.functional.binary_cross_entropy_with_logits", ""),
  "layernorm": ("torch.nn.functional.layer_norm", ""), "batchnorm": ("torch.nn.functional.batch_norm", ""),
  "scaled_uniform": ("", "uniform(-1, 1) / sqrt(numel)"), "glorot_uniform": ("torch.nn.init.xavier_uniform_", ""),
  "kaiming_uniform": ("torch.nn.init.kaiming_uniform_", ""), "kaiming_normal": ("torch.nn.init.kaiming_normal_", ""),
  "uniform": ("torch.empty(...).uniform_", ""), "normal": ("torch.normal", ""),
  "manual_seed": ("torch.manual_seed", ""), "no_grad": ("torch.no_grad", ""), "enable_grad": ("torch.enable_grad", ""),
  "set_grad_enabled": ("torch.set_grad_enabled", ""), "is_grad_enabled": ("torch.is_grad_enabled", ""),
  "var_mean": ("torch.var_mean", ""), "std_mean": ("torch.std_mean", ""),
  "allclose": ("allclose", "a Python bool; realizes"),
}
FUNCTIONAL = ("avg_pool2d", "max_pool2d", "conv1d", "conv2d", "conv_transpose2d", "cross_entropy", "nll_loss",
              "dropout", "interpolate", "scaled_dot_product_attention", "gelu", "silu", "elu", "celu", "selu", "mish",
              "relu6", "hardtanh", "hardswish", "hardsigmoid", "leaky_relu", "logsigmoid", "softplus", "softsign",
              "max_unpool2d", "avg_pool3d", "max_pool3d", "conv3d")
FACTORY = ("arange", "linspace", "eye", "zeros", "ones", "full", "empty", "rand", "randn", "randint", "meshgrid")

def rows() -> list[tuple[str, str, str, str]]:
  import torch
  out = []
  for name in sorted(n for n in dir(Tensor) if not n.startswith("_")):
    attr = getattr(Tensor, name)
    raw = Tensor.__dict__.get(name) or next((c.__dict__[name] for c in Tensor.__mro__ if name in c.__dict__), None)
    kind = "property" if isinstance(raw, property) else "static" if isinstance(raw, staticmethod) else \
      "method" if callable(attr) else "attribute"
    if name in TORCH: tname, note = TORCH[name]
    elif name in FUNCTIONAL: tname, note = f"torch.nn.functional.{name}", ""
    elif name in FACTORY: tname, note = f"torch.{name}", ""
    elif hasattr(torch.Tensor, name): tname, note = name, ""
    elif hasattr(torch, name): tname, note = f"torch.{name}", ""
    elif hasattr(torch.nn.functional, name): tname, note = f"torch.nn.functional.{name}", ""
    else: tname, note = "", ""
    out.append((name, kind, tname, note))
  return out

def table() -> str:
  lines = [HEADING, "",
           "Every public `Tensor` method and attribute (generated by `python3 extra/api_table.py --write` from "
           "`dir(Tensor)`; do not edit by hand). *torch* is the PyTorch spelling: **same** where `torch.Tensor` has "
           "the same name, — where PyTorch has no counterpart.", "",
           "| teeny | kind | torch | note |", "|---|---|---|---|"]
  for name, kind, tname, note in rows():
    shown = "**same**" if tname == name else (f"`{tname}`" if tname else "—")
    lines.append(f"| `{name}` | {kind} | {shown} | {note} |")
  return "\n".join(lines) + "\n"

def _with_table(text: str) -> str:
  i = text.find("\n" + HEADING + "\n")
  head = text if i < 0 else text[:i + 1]
  return head.rstrip("\n") + "\n\n" + table()

if __name__ == "__main__":
  if "--write" in sys.argv or "--check" in sys.argv:
    with open(README) as f: text = f.read()
    new = _with_table(text)
    if "--check" in sys.argv:
      if new != text: sys.exit("README.md's Tensor API table is stale: run python3 extra/api_table.py --write")
    else:
      with open(README, "w") as f: f.write(new)
  else: print(table(), end="")
