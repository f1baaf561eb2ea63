"""Full JSL: the D x D attention matrix A and v in R^d trained by gradient descent (flax + optax).
What the level accepts is in `full.jsl.spec`; the names below load on first use
(`dynsim.lazy`)."""

from dynsim.lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    submodules=[
        "fig2",
        "glm",
        "many",
        "module",
        "observables",
        "population",
        "realistic",
        "sampling",
        "selfcheck",
        "simulation",
        "spec",
        "training",
        "transfer",
    ],
    attrs={
        "simulation": ["simulate"],
        "spec": ["validate_run_options"],
        "module": ["PositionalAttentionViT"],
        "training": ["initial_params", "model_for", "optimizer"],
    },
)
