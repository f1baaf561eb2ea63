"""What `check-theorems mim` judges: the claims' names, the P ladder and Theorem 4.1's eps. Pure
Python: the command's --help and --only read them without loading the levels."""

CLAIMS = (
    "Thm 4.1 loss gap",
    "F.3 two-phase",
    "rate ratio side",
    "Lemma 5.3 switch",
    "Lemma 5.3 (b,c) small",
    "Sec. 5.4 PP small",
    "App. E global one-phase",
)

LADDER = (256, 1024, 4096, 16384)  # the full ladder of perfect squares (grid areas)
# CI-sized (the tests and --quick): the smallest three grid sizes that realise the same Delta
# (0.404, 0.400, 0.396; P = 64 realises 0.44, another problem)
QUICK_LADDER = (256, 1024, 4096)
EPS = 0.01  # Theorem 4.1's epsilon ("for any 0 < eps < 1"); the loss gap must be <= EPS at T


def check_clusters(values: dict) -> None:
    """--K: an integer >= 1 (the config would name its field, not the option)."""
    K = values["K"]
    if isinstance(K, bool) or not isinstance(K, int) or K < 1:
        raise ValueError(
            f"--K = {K!r} is invalid: must be an integer >= 1 (the number of clusters)"
        )
