"""Plausible defects of the MIM setting's code, planted one at a time by `dynsim.detection` to show
that `compare mim` or a claim of `check-theorems mim` notices each (docs/claims.md, "Detection
matrix"). Each is an edit of one line of the named function, as a developer could have written it,
or a wrapper; none edits a file (`dynsim.mutation`).

Where each defect can be seen: `check-theorems mim` runs the reduced level only (mean field, K = 1),
so a defect of the full level is for `compare` alone; `compare mim` at its default (K = 1, exact)
never reads the mean-field table, and no per-patch comparison reads `pp_max`, so a defect there is
for the claims alone; a defect in code both levels share (the latent law's weights, the areas) moves
both levels alike, which `compare` sees only where the levels read it differently (the latent
weights: the reduced level's recorded attention is a weighted sum, the full level's a ratio). The
full level's model (`dynsim.mim.model`) is the full level's only: the reduced level's loss is the
sympy one (`reduced.mim.symbolic`)."""

from __future__ import annotations

from dynsim.mutation import Catalogue, Mutation, edit, swap

TERMS = "reduced.mim.dynamics:terms"  # the per-row softmax masses and partials of the reduced GD
RATES = "reduced.mim.dynamics:rates"
TRAINING = "full.mim.training"
MODEL = "dynsim.mim.model"


def _train(old: str, new: str):
    """An edit of `full.mim.training.train`, jitted as the module's `train_jit` is (the simulator
    calls the jitted function, which holds the original)."""

    def make(jitted):
        import jax  # JAX only where the mutation is planted

        from full.mim import training

        edited = edit(f"{TRAINING}:train", old, new).make(training.train)
        return jax.jit(edited, static_argnums=1)

    return swap(f"{TRAINING}:train_jit", make)


def _random_init(cls):
    """The attention layer with Q drawn from N(0, 0.01^2) (a flax habit) instead of the paper's Q =
    0 (flax builds a module's methods with the class, so the class is replaced)."""
    import jax  # JAX only where the mutation is planted

    class RandomInit(cls):
        def setup(self):
            self.Q = self.param(
                "Q",
                lambda key, shape: 0.01 * jax.random.normal(key, shape, self.dtype),
                (self.d, self.d),
            )

    return RandomInit


NORMALISER = "Z = jnp.sum(S) + jnp.sum(M) + e_self"

MUTATIONS = (
    # ------------------------------------------------------------------ the reduced level
    Mutation(
        "normaliser-without-target",
        "normaliser",
        "reduced",
        "the reduced softmax's normaliser Z sums the other areas' masses only (the own area's "
        "unmasked mass S_n dropped)",
        (edit(TERMS, NORMALISER, "Z = jnp.sum(S[1:]) + jnp.sum(M) + e_self"),),
        caught_by=("compare",),
    ),
    Mutation(
        "masked-keys-out-of-softmax",
        "mask",
        "reduced",
        "the reduced softmax leaves the masked keys out (their mass M, scored B, dropped from Z; "
        "the mask token still enters the model's softmax, eq. 2.6)",
        (edit(TERMS, NORMALISER, "Z = jnp.sum(S) + e_self"),),
        caught_by=("compare", "F.3 two-phase", "App. E global one-phase"),
    ),
    Mutation(
        "query-in-own-area",
        "term",
        "reduced",
        "the query counted among its own area's keys: C'_n = C_n instead of C_n - 1 (counts, "
        "masked mass and B_n's share)",
        (
            edit(
                "reduced.mim.classes:table",
                "caps = [sizes[0] - 1] + list(sizes[1:])",
                "caps = list(sizes)",
            ),
        ),
        caught_by=("compare",),
    ),
    Mutation(
        "pp-gradient-masked-sign",
        "sign",
        "reduced",
        "dl/dB_j's masked-mass term dl/dZ M enters with a minus (chain rule through d M / d B = M)",
        (edit(TERMS, "g * S + dZ * M", "g * S - dZ * M"),),
        caught_by=("compare",),
    ),
    Mutation(
        "reduced-step-without-gamma",
        "learning rate",
        "reduced",
        "the reduced step eta c without P(p in M) = |M|/P: c = 1/K (the per-query loss taken "
        "unconditional)",
        (edit(RATES, "c = (cfg.masked / cfg.P) / cfg.K", "c = 1.0 / cfg.K"),),
        caught_by=("compare",),
    ),
    Mutation(
        "pp-step-without-1/C",
        "factor",
        "reduced",
        "B_j's step without its 1/C'_j (the share of one of the C'_j entries of Q that move B_j)",
        (
            edit(
                RATES,
                "jnp.where(pop > 0, 1.0 / jnp.where(pop > 0, pop, 1.0), 0.0)",
                "jnp.where(pop > 0, 1.0, 0.0)",
            ),
        ),
        caught_by=(
            "compare",
            "F.3 two-phase",
            "Lemma 5.3 switch",
            "Lemma 5.3 (b,c) small",
            "Sec. 5.4 PP small",
        ),
    ),
    Mutation(
        "loss-other-areas-over-Z",
        "factor",
        "reduced",
        "the sympy per-sample loss's other-area term written R/Z (sum_j Attn_j^2 = R/Z^2)",
        (edit("reduced.mim.symbolic:per_sample_loss", "R / Z**2", "R / Z"),),
        caught_by=("compare", "F.3 two-phase", "Lemma 5.3 switch", "App. E global one-phase"),
    ),
    Mutation(
        "other-area-chain-rule-half",
        "factor",
        "reduced",
        "the chain rule through R = sum_j z_j^2 S_j^2 without its 2: g_j = z_j^2 S_j dl/dR "
        "(d S_j^2 / d S_j = 2 S_j)",
        (edit(TERMS, "2.0 * z**2 * S * dR", "z**2 * S * dR"),),
        caught_by=(
            "compare",
            "F.3 two-phase",
            "Lemma 5.3 switch",
            "App. E global one-phase",
        ),
    ),
    Mutation(
        "attention-over-unmasked-mass",
        "observable",
        "reduced",
        "the reduced level's recorded area attention S_j / sum_i S_i (normalised by the unmasked "
        "mass only; the dynamics' own Attn_j is S_j / Z)",
        (edit(TERMS, "dZ * e_self, S / Z", "dZ * e_self, S / jnp.sum(S)"),),
        caught_by=("compare",),
    ),
    Mutation(
        "pp-max-summed",
        "observable",
        "reduced",
        "the reduced level's pp_max (and max |B| after every step) written as the sum of |B| over "
        "the key areas and classes instead of the largest |B|",
        (
            edit(
                "reduced.mim.joint:pp_max_of",
                "jnp.max(jnp.where(pop > 0, jnp.abs(B), 0.0))",
                "jnp.sum(jnp.where(pop > 0, jnp.abs(B), 0.0))",
            ),
        ),
        caught_by=("Lemma 5.3 (b,c) small",),
    ),
    Mutation(
        "mean-field-counts-rounded",
        "data law",
        "reduced",
        "the mean-field unmasked counts rounded to whole patches (the means (P - |M|) C'_j / "
        "(P - 1) are not integers)",
        (
            edit(
                "reduced.mim.classes:count_rows",
                "np.array([[drawn * c / (P - 1) for c in caps]])",
                "np.array([[round(drawn * c / (P - 1)) for c in caps]], dtype=float)",
            ),
        ),
        caught_by=(),
    ),
    # --------------------------------------------------------------------- the full level
    Mutation(
        "full-learning-rate-gamma",
        "learning rate",
        "full",
        "the full level's optimizer built with eta gamma (the reduced level's P(p in M) applied to "
        "the full loss, which already sums the masked queries only)",
        (_train("optax.sgd(cfg.eta)", "optax.sgd(cfg.eta * cfg.mask_ratio)"),),
        caught_by=("compare",),
    ),
    Mutation(
        "full-masks-keep-ratio",
        "mask",
        "full",
        "the full level's exact masks hide P - |M| patches (gamma read as the keep ratio)",
        (
            edit(
                f"{TRAINING}:exact_tables",
                "data.all_masks(cfg.P, cfg.masked)",
                "data.all_masks(cfg.P, cfg.P - cfg.masked)",
            ),
        ),
        caught_by=("compare",),
    ),
    Mutation(
        "full-fp-transposed",
        "observable",
        "full",
        "the full level's fp_corr read as v^T Q e_p (Q transposed) instead of e_p^T Q v",
        (edit(f"{TRAINING}:correlations", '"pa,ab,kjb->pkj"', '"pa,ba,kjb->pkj"'),),
        caught_by=("compare",),
    ),
    Mutation(
        "full-area-attention-with-masked",
        "observable",
        "full",
        "the full level's area attention counts the area's masked patches too (Attn_{p->P_{k,j}}, "
        "not Attn_{p->P_{k,j} cap U})",
        (edit(f"{MODEL}:area_attention", " * (~masked)[:, None]", ""),),
        caught_by=("compare",),
    ),
    Mutation(
        "values-with-positions",
        "term",
        "full",
        "the model reconstructs from the masked input plus positions (F_p = sum_q attn x~_q + e_q: "
        "the positions enter the values, not the scores only)",
        (
            edit(
                f"{MODEL}:masked_loss",
                "reconstruct(attention(Q, Xt, E), Xt)",
                "reconstruct(attention(Q, Xt, E), Xt + E)",
            ),
        ),
        caught_by=("compare",),
    ),
    Mutation(
        "softmax-over-queries",
        "normaliser",
        "full",
        "the model's softmax normalised over the queries (axis 0) instead of the keys",
        (edit(f"{MODEL}:attention", "axis=-1", "axis=0"),),
        caught_by=("compare",),
    ),
    Mutation(
        "loss-over-every-patch",
        "mask",
        "full",
        "the model's reconstruction loss summed over every patch, not the masked ones (eq. 2.8)",
        (
            edit(
                f"{MODEL}:masked_loss",
                "jnp.where(masked, jnp.sum((F - X) ** 2, axis=-1), 0.0)",
                "jnp.sum((F - X) ** 2, axis=-1)",
            ),
        ),
        caught_by=("compare",),
    ),
    Mutation(
        "full-random-init",
        "initialization",
        "full",
        "the full level's Q drawn from N(0, 0.01^2) entrywise (a flax habit) instead of Q = 0",
        (swap(f"{TRAINING}:MaskedAttention", _random_init),),
        caught_by=("compare",),
    ),
    # ---------------------------------------------------------- code both levels share
    Mutation(
        "latent-weights-summed",
        "data law",
        "both",
        "the probability of a latent vector (z_1..z_n) written sum_j p(z_j) instead of prod_j "
        "(each image weighted N_k times: z = 1 gives weight N_k)",
        (
            edit(
                "dynsim.mim.data:z_vectors",
                "np.prod(probs[idx], axis=1)",
                "np.sum(probs[idx], axis=1)",
            ),
        ),
        caught_by=(
            "compare",
            "Thm 4.1 loss gap",
            "F.3 two-phase",
            "rate ratio side",
            "Lemma 5.3 switch",
            "Lemma 5.3 (b,c) small",
        ),
    ),
    Mutation(
        "global-band-ceil",
        "data law",
        "both",
        "the grid's global band gets ceil(global size / side) rows (enough rows to hold it) "
        "instead of the nearest number: a larger global area at P = 256 and 16384",
        (
            edit(
                "dynsim.mim.partition:_grid",
                "int(round(global_size / side))",
                "math.ceil(global_size / side)",
            ),
        ),
        caught_by=(),
    ),
)

COMPARE = ("--steps", "100")
SIZES = (
    "check-theorems: the default ladder P = 256, 1024, 4096, 16384 (Delta = 0.4, gamma = 0.5, "
    "T(P) = 1000 (P/1024)^0.6 steps), every claim named by --only; compare: the default problem "
    "(P = 16, areas 8, 2, 2, 2, 2, gamma = 0.75, d = 21, both levels exact) for 100 GD steps"
)


def catalogue(claims: tuple) -> Catalogue:
    """The catalogue with its probes: `check-theorems mim` on the default ladder (--quick's three
    rungs leave Sec. 5.4 PP small inconclusive) with every claim named by --only, which skips the
    measurements' own runs (pp_frozen beside, the Delta < 0 run, Section 6's model) and judges the
    same rungs; `compare mim` at its default problem, 100 steps (the levels agree to rounding, so
    any step shows a one-level defect)."""
    return Catalogue(MUTATIONS, check=("--only", ",".join(claims)), compare=COMPARE, sizes=SIZES)
