"""Reduced JSL: exact population dynamics (P) in (alpha, gamma, rho) (Lemmas 4.1-4.3). What the
level accepts is in `reduced.jsl.spec`; the names below load on first use (`dynsim.lazy`)."""

from dynsim.lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    submodules=[
        "class_sums",
        "classes",
        "configurations",
        "dynamics",
        "flow",
        "fstar",
        "many",
        "moments",
        "simulation",
        "spec",
        "state",
        "sums",
        "symbolic",
        "tables",
    ],
    attrs={
        "simulation": ["simulate"],
        "many": ["simulate_many"],
        "dynamics": ["attention_weights", "initial_state", "loss_and_gradients"],
    },
)
