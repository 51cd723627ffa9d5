"""Arrays in and out of the engine: numpy on the host, GPU arrays (CuPy,
PyTorch, JAX, anything with ``__dlpack__``) on a CUDA build, results in the
caller's framework and on the caller's device."""

import numpy as np

_FRAMEWORKS = ("torch", "cupy", "jax", "jaxlib")


def framework_of(x):
    """The array framework x belongs to: 'numpy' for numpy arrays and
    anything numpy converts (lists, scalars), else the module's name."""
    if isinstance(x, np.ndarray):
        return "numpy"
    root = type(x).__module__.split(".")[0]
    if root in _FRAMEWORKS and hasattr(x, "__dlpack__"):
        return "jax" if root == "jaxlib" else root
    return "numpy"


def _float_dtype(dtype, parameter):
    kind = np.dtype(dtype).kind
    if kind not in "fiub":
        raise ValueError(f"{parameter}: dtype {np.dtype(dtype)} is not a real number type")
    return np.dtype(dtype) == np.float32


def points(x, parameter, dimension=None, allow_vector=True):
    """x as float32 points (n, m) for the engine, with what the caller's
    results need: (array, leading shape, float64 results?, framework)."""
    framework = framework_of(x)
    if framework == "numpy":
        try:
            a = np.asarray(x)
        except Exception as error:  # ragged lists and the like
            raise ValueError(f"{parameter}: not an array of points ({error})") from None
        single32 = _float_dtype(a.dtype, parameter)
        if a.ndim == 0:
            raise ValueError(f"{parameter}: a scalar, not points")
        if dimension is not None and a.shape[-1] != dimension:
            raise ValueError(
                f"{parameter}: points of dimension {a.shape[-1]}, expected {dimension} "
                f"(shape {a.shape})")
        if a.ndim == 1 and not allow_vector:
            raise ValueError(f"{parameter}: expected a 2-D array (n, m), got shape {a.shape}")
        lead = a.shape[:-1]
        flat = a.reshape(-1, a.shape[-1])
        # float32 as the engine reads it; F order is used in place.
        if not (flat.flags.c_contiguous or flat.flags.f_contiguous) or flat.dtype != np.float32:
            flat = np.ascontiguousarray(flat, dtype=np.float32)
        return flat, lead, not single32, framework
    # A GPU (or other DLPack) array: converted in its own framework.
    shape = tuple(x.shape)
    if len(shape) == 0:
        raise ValueError(f"{parameter}: a scalar, not points")
    if dimension is not None and shape[-1] != dimension:
        raise ValueError(
            f"{parameter}: points of dimension {shape[-1]}, expected {dimension} (shape {shape})")
    if len(shape) == 1 and not allow_vector:
        raise ValueError(f"{parameter}: expected a 2-D array (n, m), got shape {shape}")
    dtype_name = str(x.dtype).split(".")[-1]
    if not any(dtype_name.startswith(p) for p in ("float", "int", "uint", "bool", "bfloat")):
        raise ValueError(f"{parameter}: dtype {dtype_name} is not a real number type")
    float64 = dtype_name != "float32"
    flat = x.reshape(-1, shape[-1])
    if dtype_name != "float32":
        flat = _astype32(flat, framework)
    return flat, shape[:-1], float64, framework


def vector(x, parameter, n):
    """x as a float32 vector of n values (masses): (array, framework)."""
    framework = framework_of(x)
    if framework == "numpy":
        a = np.asarray(x)
        _float_dtype(a.dtype, parameter)
        a = np.broadcast_to(a, (n,)) if a.ndim == 0 else a
        if a.shape != (n,):
            raise ValueError(f"{parameter}: shape {a.shape}, expected ({n},)")
        return np.ascontiguousarray(a, dtype=np.float32), framework
    if tuple(x.shape) != (n,):
        raise ValueError(f"{parameter}: shape {tuple(x.shape)}, expected ({n},)")
    return (x if str(x.dtype).endswith("float32") else _astype32(x, framework)), framework


def _astype32(x, framework):
    if framework == "torch":
        import torch

        return x.to(torch.float32)
    return x.astype("float32")


def empty(like, framework, shape, dtype):
    """An uninitialised output in the caller's framework, on the device of
    `like`: the engine writes its results there (the framework's allocator,
    no copy afterwards). JAX arrays are immutable: their outputs are made
    by CuPy or PyTorch on the same GPU and handed over through DLPack
    (finish())."""
    dtype = np.dtype(dtype)
    if framework == "numpy":
        return np.empty(shape, dtype)
    if framework == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype.name), device=like.device)
    if framework == "cupy":
        import cupy

        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype)
    if framework == "jax":
        device = like.devices().pop() if hasattr(like, "devices") else None
        if device is None or device.platform == "cpu":
            return np.empty(shape, dtype)
        try:
            import cupy

            with cupy.cuda.Device(device.id):
                return cupy.empty(shape, dtype)
        except ImportError:
            import torch

            return torch.empty(shape, dtype=getattr(torch, dtype.name), device=f"cuda:{device.id}")
    raise ValueError(f"unknown array framework {framework}")


def engine(*arrays):
    """The arrays as the engine takes them. PyTorch tensors go as DLPack
    capsules from torch's C++ exporter: Tensor.__dlpack__ runs Python-side
    stream handling for each array, a cost of the order of the whole search's
    host overhead at a million points (perf/results/python/README.md). The
    engine runs on CUDA's legacy default stream, which waits for torch's
    default stream; a tensor needing gradients is read through a detached
    view."""
    return tuple(_capsule(a) if type(a).__module__.startswith("torch") else a for a in arrays)


def _capsule(tensor):
    from torch.utils.dlpack import to_dlpack

    return to_dlpack(tensor.detach() if tensor.requires_grad else tensor)


def finish(a, framework):
    """An output as the caller's framework holds it."""
    if framework == "jax" and not isinstance(a, np.ndarray):
        import jax.dlpack

        return jax.dlpack.from_dlpack(a)
    return a
