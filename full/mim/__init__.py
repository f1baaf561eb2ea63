"""Full MIM: the literal d x d attention matrix Q trained by gradient descent (flax + optax). What
the level accepts is in `full.mim.spec`; the names below load on first use (`dynsim.lazy`)."""

from dynsim.lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    submodules=["batch", "module", "spec", "training"],
    attrs={
        "module": ["MaskedAttention"],
        "training": [
            "attention_maps",
            "correlations",
            "simulate",
            "trained",
            "validate_run_options",
        ],
    },
)
