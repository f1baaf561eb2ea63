"""Plausible defects of the ICL setting's code, planted one at a time by `dynsim.detection` to show
that `compare icl` or a claim of `check-theorems icl` notices each (docs/claims.md, "Detection
matrix"). Each is an edit of one line of the named function, as a developer could have written it,
or a wrapper; none edits a file (`dynsim.mutation`)."""

from __future__ import annotations

from dynsim.mutation import Catalogue, Mutation, edit, edit_each, swap

LIMIT, ERROR, SHIFT = "Theorem 4.1 limit", "Theorem 4.2 error", "Sec. 4.2 covariate shift"
POPULATION = ("full.icl.training", "dynsim.icl.reading")  # where population_loss is looked up
PROMPTS = "full.icl.model:prompts"


def _scaled_gradient(factor: float):
    """descend's gradient hook scaled: (L, dL/du, dL/da) -> (L, dL/du, factor dL/da)."""

    def make(terms):
        def scaled(cfg, y):
            loss, d_u, d_a = terms(cfg, y)
            return loss, d_u, factor * d_a

        return scaled

    return make


def _every_token(cls):
    """The layer with f(E) = E + W^PV E (E^T W^KQ E) / (N + 1): the query counted in the
    normaliser (flax builds a module's methods with the class, so the class is replaced)."""
    import flax.linen as nn  # flax only where the mutation is planted

    from full.icl.model import initial

    class EveryToken(cls):
        @nn.compact
        def __call__(self, E):
            start = initial(self.sigma, self.d, self.dtype)
            pv = self.param("W_PV", lambda key: start["W_PV"])
            kq = self.param("W_KQ", lambda key: start["W_KQ"])
            return E + pv @ E @ (E.swapaxes(-1, -2) @ kq @ E) / E.shape[-1]

    return EveryToken


MUTATIONS = (
    Mutation(
        "gamma-trace-half",
        "factor",
        "both",
        "Gamma's trace term written tr(Lambda)/(2N) (theory and both levels' observables)",
        (
            edit("dynsim.icl.moments:gamma", "np.trace(lam) / N", "np.trace(lam) / (2 * N)"),
            edit("dynsim.icl.traced:gamma", "jnp.sum(lam) / cfg.N", "jnp.sum(lam) / (2 * cfg.N)"),
        ),
        caught_by=(LIMIT,),
    ),
    Mutation(
        "gamma-no-finite-N",
        "factor",
        "both",
        "Gamma's (1 + 1/N) Lambda written Lambda (the finite-N factor dropped)",
        (
            edit("dynsim.icl.moments:gamma", "(1 + 1 / N) * lam", "lam"),
            edit("dynsim.icl.traced:gamma", "(1 + 1 / cfg.N) * lam", "lam"),
        ),
        caught_by=(LIMIT,),
    ),
    Mutation(
        "population-cross-sign",
        "sign",
        "full",
        "the population loss's cross term E[(s - <w, x_q>) p^T Lambda c] enters with a minus",
        edit_each(POPULATION, "population_loss", "+ 2 * EDA +", "- 2 * EDA +"),
        caught_by=("compare", LIMIT, ERROR, SHIFT),
    ),
    Mutation(
        "population-missing-1/N",
        "factor",
        "full",
        "the population loss's (p^T Lambda p)(c^T Lambda c) term without its 1/N",
        edit_each(POPULATION, "population_loss", "EPC / N", "EPC"),
        caught_by=("compare", LIMIT, ERROR, SHIFT),
    ),
    Mutation(
        "population-isserlis-trace",
        "factor",
        "full",
        "the population loss's E[(p^T Lambda p)(c^T Lambda c)] without its tr(Lambda) (an "
        "Isserlis pairing's factor left out)",
        edit_each(
            POPULATION, "population_loss", "(P0 * c2 + v**2 * c0) * t1", "(P0 * c2 + v**2 * c0)"
        ),
        caught_by=("compare", LIMIT),
    ),
    Mutation(
        "attention-normaliser",
        "normaliser",
        "full",
        "the layer's forward pass divides by N + 1 (every token) instead of the N examples",
        (swap("full.icl.model:LinearSelfAttention", _every_token),),
    ),
    Mutation(
        "covariates-squared",
        "data law",
        "full",
        "prompts drawn with covariates of covariance Lambda^2 (the square root of Lambda dropped)",
        (edit(PROMPTS, "jnp.sqrt(jnp.asarray(scale, dtype) * spectrum)", "scale * spectrum"),),
        caught_by=(ERROR, SHIFT),
    ),
    Mutation(
        "noisy-labels",
        "data law",
        "full",
        "the prompts' labels drawn with noise of variance 0.25 (the setting is noiseless)",
        (
            edit(
                PROMPTS,
                'y = jnp.einsum("bjd,bd->bj", x, w)',
                'y = jnp.einsum("bjd,bd->bj", x, w) + 0.5 * jax.random.normal(kw, x.shape[:2], '
                "dtype)",
            ),
        ),
        caught_by=(ERROR,),
    ),
    Mutation(
        "full-learning-rate-half",
        "learning rate",
        "full",
        "the full level's optimizer built with eta / 2",
        (edit("full.icl.training:_train", "optax.sgd(cfg.eta)", "optax.sgd(cfg.eta / 2)"),),
        caught_by=("compare",),
    ),
    Mutation(
        "reduced-gradient-half",
        "factor",
        "reduced",
        "the reduced level's dL/da_k halved (a 1/2 from the summand kept twice)",
        (swap("reduced.icl.simulation:terms", _scaled_gradient(0.5)),),
        caught_by=("compare",),
    ),
    Mutation(
        "reduced-prompt-moment",
        "factor",
        "reduced",
        "the reduced level's prompt moment without its (1 + 1/N) (sympy derivation)",
        (edit("reduced.icl.symbolic:prompt_term", "(1 + 1 / N) * lam**2", "lam**2"),),
        caught_by=("compare",),
    ),
    Mutation(
        "theta-unnormalised",
        "initialization",
        "full",
        "the full level's initial Theta Theta^T = I_d (its Frobenius norm sqrt(d), not 1)",
        (edit("full.icl.model:theta_gram", " / jnp.sqrt(jnp.asarray(d, dtype))", ""),),
        caught_by=("compare",),
    ),
    Mutation(
        "gap-against-lambda",
        "observable",
        "full",
        "the full level's recorded gap measured against Lambda^-1 instead of Gamma^-1",
        (edit("full.icl.training:observe_params", "1 / traced.gamma(cfg)", "1 / lam"),),
        caught_by=("compare",),
    ),
    Mutation(
        "spectrum-exponent",
        "data law",
        "both",
        "Lambda's eigenvalues kappa^(k/d) in the levels (the theory's kappa^(k/(d-1)))",
        (edit("dynsim.icl.traced:spectrum", "/ (cfg.d - 1)", "/ cfg.d"),),
        caught_by=(LIMIT, SHIFT),
    ),
    Mutation(
        "task-from-level",
        "observable",
        "full",
        "the claims' test prompts drawn with a random task per prompt instead of the new task w",
        (edit(PROMPTS, "if task is None", "if True"),),
        caught_by=(ERROR,),
    ),
)

# kappa = 2: Lambda's eigenvalues differ (at kappa = 1 a defect in Lambda's law is invisible);
# eta = 0.02 keeps GD within its stability edge there (eta lambda_max < 2) and 2000 steps reach the
# horizon (the product's late move within 0.1 of the limit's tolerance)
ARGS = ("--kappa", "2", "--eta", "0.02", "--steps", "2000", "--record-every", "50")
CATALOGUE = Catalogue(
    MUTATIONS,
    check=ARGS,
    compare=ARGS,
    sizes="d = 3, N = 10, kappa = 2 (Lambda's eigenvalues 1, 1.41, 2), 2000 GD steps at eta = 0.02",
)
