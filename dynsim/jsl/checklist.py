"""What `check-theorems jsl` judges: the claims' names (idealized, then realistic) and Theorem 4.1's
ladder of D (the default and CI-sized sizes, the largest D whose flow has an exact class sum). Pure
Python: the command's --help and --only read them without loading the levels."""

COROLLARY = "Lemma 4.3 corollary"
IDEALIZED = ("Lemma 4.1", "Lemma 4.3", COROLLARY, "Theorem 4.1", "Theorem 3.1")
REALISTIC = (
    "Lemma 4.2 (realistic)",
    "Theorem 4.2",
    "Theorem 5.1",
    "Figure 2",
)
CLAIMS = IDEALIZED + REALISTIC

# Theorem 4.1's default sizes: exact class sums, flow to t = 1e6 (docs/jsl.md 12)
LADDER = (36, 40, 44, 48)
QUICK_LADDER = (32, 36, 40)  # CI-sized: seconds per point
# the flow needs an exact class sum: D = 64 has 15.1 million classes (docs/benchmarks.md l)
MAX_FLOW_D = 64
