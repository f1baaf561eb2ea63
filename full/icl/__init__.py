"""Full ICL: the literal (d + 1) x (d + 1) matrices W^PV and W^KQ of a linear self-attention layer
trained by gradient descent (flax + optax). What the level accepts is in `full.icl.spec`; the names
below load on first use (`dynsim.lazy`)."""

from dynsim.lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    submodules=["model", "population", "spec", "training"],
    attrs={
        "model": ["LinearSelfAttention", "predict", "prompts"],
        "population": ["population_loss"],
        "training": ["simulate"],
    },
)
