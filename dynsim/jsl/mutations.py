"""Plausible defects of the JSL setting's code, planted one at a time by `dynsim.detection` to show
that `compare jsl` or a claim of `check-theorems jsl` notices each (docs/claims.md, "Detection
matrix"). Each is an edit of one line of the named function, as a developer could have written it,
or a swapped value; none edits a file (`dynsim.mutation`). A name imported with `from x import f`
is patched in every module that looks it up while the probe runs (`dynsim.mutation.edit_each`)."""

from __future__ import annotations

from dynsim.mutation import Catalogue, Mutation, edit, edit_each, swap

COMPARE = "compare"
L41, L43, COROLLARY, T41, T31 = (
    "Lemma 4.1",
    "Lemma 4.3",
    "Lemma 4.3 corollary",
    "Theorem 4.1",
    "Theorem 3.1",
)
L42 = "Lemma 4.2 (realistic)"
# compare's realistic mode: problem (E) on fixed training sets from the random start, against the
# reduced runs from each seed's projected start, with the realistic level's own definition (its
# data law and its gradient identity, `full.jsl.selfcheck`)
REALISTIC = "compare --mode realistic"

MODEL = "dynsim.jsl.model"
DATA = "dynsim.jsl.data"
# where the full level looks up model (T)'s forward pass: the flax module (every full run) and
# the realistic runs' hand-contracted gradient (`full.jsl.sampling.projections_loss`)
FORWARD = ("full.jsl.module", "full.jsl.sampling")
# where the full level looks up the logistic loss: the exact population, the realistic runs'
# gradient and their recorded loss, Theorem 3.1's GLM
LOSS = ("full.jsl.population", "full.jsl.sampling", "full.jsl.realistic", "full.jsl.glm")
# where the full level looks up its optimizer and its observables: the realistic runs and exact GD
# (an importer before the module it imports from: resolving it then imports the original)
FULL_GD = ("full.jsl.realistic", "full.jsl.training")
MOMENTS = "reduced.jsl.moments"
# the reduced class sums' cached tables (monomials from `moments.derive`): a defect that changes
# F's moment structure must not read, nor leave behind, a table built without (or with) it
FRESH_TABLES = swap("reduced.jsl.tables:_tables", lambda tables: {})


MUTATIONS = (
    Mutation(
        "A-update-half",
        "factor",
        "full",
        "the full level's A-update halved: the diagonal mask written (1 - I)/2 (each off-diagonal "
        "pair counted once)",
        edit_each(
            FULL_GD,
            "optimizer",
            '"A": updates["params"]["A"] * off_diagonal}',
            '"A": updates["params"]["A"] * off_diagonal / 2}',
        ),
        caught_by=(COMPARE,),
    ),
    Mutation(
        "realistic-A-gradient-half",
        "factor",
        "full",
        "the realistic runs' hand-contracted gradient returns dL/dA / 2",
        (
            edit(
                "full.jsl.realistic:empirical_value_and_grad",
                '{"params": {"A": gA, "v": gv}}',
                '{"params": {"A": gA / 2, "v": gv}}',
            ),
        ),
        caught_by=(REALISTIC,),
    ),
    Mutation(
        "model-missing-D",
        "factor",
        "full",
        "model (T)'s forward pass without its factor D: sigma(sum_j S_ij <v, X_j>)",
        edit_each(FORWARD, "forward", "pre = D * jnp.einsum", "pre = jnp.einsum"),
        caught_by=(COMPARE, L42, REALISTIC),
    ),
    Mutation(
        "no-factor-D-both",
        "factor",
        "both",
        "the paper's model misread without its factor D, in both levels: the full forward pass "
        "and the reduced pre-activation y = alpha (sympy) instead of D alpha",
        edit_each(FORWARD, "forward", "pre = D * jnp.einsum", "pre = jnp.einsum")
        + (edit(f"{MOMENTS}:derive", "state = {y_: D * alpha,", "state = {y_: alpha,"),),
        caught_by=(),
    ),
    Mutation(
        "softmax-over-all-entries",
        "normaliser",
        "full",
        "the score matrix's softmax normalised over all D^2 entries (axis=(-2, -1)), not per row",
        edit_each(("full.jsl.observables", MODEL), "attention", "axis=-1)", "axis=(-2, -1))"),
        caught_by=(COMPARE, L42, REALISTIC),
    ),
    Mutation(
        "diagonal-unmasked",
        "mask",
        "full",
        "the optimizer's diagonal mask not applied: A's diagonal moves with its gradient",
        edit_each(
            FULL_GD,
            "optimizer",
            '"A": updates["params"]["A"] * off_diagonal}',
            '"A": updates["params"]["A"]}',
        ),
        caught_by=(COMPARE,),
    ),
    Mutation(
        "logistic-sign",
        "sign",
        "full",
        "the logistic loss written softplus(yF) (the margin's sign flipped) in the full level",
        edit_each(LOSS, "logistic_loss", "softplus(-margin)", "softplus(margin)"),
        caught_by=(COMPARE, REALISTIC),
    ),
    Mutation(
        "reduced-gamma-rate",
        "learning rate",
        "reduced",
        "the reduced gamma step eta/(D C) (the diagonal counted in the within-set orbit), not "
        "eta/(D(C - 1))",
        (
            edit(
                "reduced.jsl.dynamics:orbit_step_sizes",
                "cfg.eta / (D * (C - 1))",
                "cfg.eta / (D * C)",
            ),
        ),
        caught_by=(COMPARE,),
    ),
    Mutation(
        "data-q-half",
        "data law",
        "full",
        "random patches drawn nonzero with probability q/2 (q/4 each sign), not q",
        (
            edit(
                f"{DATA}:sample_signs",
                "jnp.where(u < cfg.q / 2, 1.0, jnp.where(u < cfg.q, -1.0",
                "jnp.where(u < cfg.q / 4, 1.0, jnp.where(u < cfg.q / 2, -1.0",
            ),
        ),
        caught_by=(T31, REALISTIC),
    ),
    Mutation(
        "noise-sigma-as-variance",
        "data law",
        "full",
        "the patches' noise drawn with std sqrt(sigma) (the noise std sigma read as a variance)",
        (edit(f"{DATA}:sample", "z = cfg.sigma * flat(", "z = jnp.sqrt(cfg.sigma) * flat("),),
        caught_by=(REALISTIC,),
    ),
    Mutation(
        "noise-variance-as-std",
        "data law",
        "full",
        "the patches' noise drawn with std sigma^2 (the variance passed where the std is asked)",
        (edit(f"{DATA}:sample", "z = cfg.sigma * flat(", "z = cfg.sigma**2 * flat("),),
        caught_by=(L42, REALISTIC),
    ),
    Mutation(
        "signal-set-off-by-one",
        "data law",
        "full",
        "the signal set drawn from randint(0, L - 1): the last set never carries the label",
        (
            edit(
                f"{DATA}:sample_signs",
                "(n,), 0, cfg.L)",
                "(n,), 0, cfg.L - 1)",
            ),
        ),
        caught_by=(REALISTIC,),
    ),
    Mutation(
        "population-signal-set-off-by-one",
        "data law",
        "full",
        "the exact population enumerated with the signal set in range(L - 1): the last set never "
        "carries the label",
        (
            edit(
                "full.jsl.population:enumerate_configurations",
                "for ell in range(cfg.L):",
                "for ell in range(cfg.L - 1):",
            ),
        ),
        caught_by=(COMPARE, L41),
    ),
    Mutation(
        "reduced-normaliser",
        "normaliser",
        "reduced",
        "the reduced softmax normaliser 1 + C e^(gamma-beta) + ... (the diagonal counted in the "
        "within-set orbit) in the sympy moments",
        (
            edit(
                f"{MOMENTS}:derive",
                "Z = 1 + (C - 1) * e_g + (D - C) * e_r",
                "Z = 1 + C * e_g + (D - C) * e_r",
            ),
        ),
        caught_by=(COMPARE, L43, COROLLARY),
    ),
    Mutation(
        "reduced-moment-factor",
        "factor",
        "reduced",
        "the reduced F's s^0 terms summed over a set without their factor C (sympy moments)",
        (
            edit(
                f"{MOMENTS}:moment_F",
                "per_set += C * coef if j == 0",
                "per_set += coef if j == 0",
            ),
            FRESH_TABLES,
        ),
        caught_by=(COMPARE, L43, COROLLARY),
    ),
    Mutation(
        "reduced-contrast-sign",
        "sign",
        "reduced",
        "the reduced set contrast B = Xi - Gamma instead of Gamma - Xi (sympy moments)",
        (edit(f"{MOMENTS}:derive", "B_: Gam - Xi", "B_: Xi - Gam"),),
        caught_by=(COMPARE, L43, COROLLARY, T41),
    ),
    Mutation(
        "gamma-with-diagonal",
        "observable",
        "full",
        "the full level's gamma read over the same-set entries with the diagonal (beta) included",
        edit_each(
            FULL_GD,
            "reduction",
            "gamma, gamma_spread = orbit(within)",
            "gamma, gamma_spread = orbit(within | jnp.eye(cfg.D, dtype=bool))",
        ),
        caught_by=(COMPARE, REALISTIC),
    ),
    Mutation(
        "realistic-transpose-as-reshape",
        "term",
        "full",
        "the realistic runs' X^T for the v-gradient built by reshape (d, n D), not a transpose",
        (
            edit(
                "full.jsl.realistic:transposed",
                "X.reshape(-1, X.shape[-1]).T",
                "X.reshape(X.shape[-1], -1)",
            ),
        ),
        caught_by=(REALISTIC,),
    ),
)

# the idealized claims at --quick's judged point and ladder (D = 36, C = 4, q = 0.5, D = 32, 36, 40,
# flow to t = 1e6: D = 21 (C = 3) and D = 24 (C = 4, q(D - C) = 16) fail Lemma 4.3 and leave
# Theorem 4.1 short of its horizon in the healthy simulator); Theorem 3.1's GLM on 2 seeds;
# Lemma 4.2 alone of the realistic claims, on N = 2000 and T = 1000 steps (past the flow's end of
# Event I, its premise); Theorems 4.2 and 5.1 need the quick plan's N = 8000 to its T = 5300 (6
# seeds), too long a row for the matrix (docs/benchmarks.md q has the costs)
CHECK = (
    "--quick",
    "--seeds",
    "2",
    "--only",
    ",".join((L41, L43, COROLLARY, T41, T31, L42)),
    "--realistic-sizes",
    "N=2000,T=1000",
)
CATALOGUE = Catalogue(
    MUTATIONS,
    check=CHECK,
    compare=("--steps", "5000"),
    compares=(
        (
            REALISTIC,
            ("--mode", "realistic", "--seeds", "8", "--N", "1000", "--ladder", "1000")
            + ("--steps", "200", "--n-test", "512"),
        ),
    ),
    sizes="check-theorems --quick's idealized point (D = 36, C = 4, q = 0.5, nu = 1e-4, flow to "
    "t = 1e6 over D = 32, 36, 40), its GLM on 2 seeds, Lemma 4.2 on 2 realistic seeds at D = 9, "
    "N = 2000, T = 1000; compare jsl's default problem (D = 9, C = 3, exact) to 5000 steps; "
    "compare's realistic mode there on 8 seeds of N = 1000 to 200 steps (its self-check reads the "
    "data law and the gradient identity, which need no long run; 8 seeds give the trajectories' "
    "band 7 degrees of freedom)",
)
