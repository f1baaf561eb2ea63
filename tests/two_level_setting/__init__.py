"""A second test setting, defined outside dynsim as a user's package would define one, that declares
every per-level field of `dynsim.verbs` the toy setting (tests/toy_setting) leaves out.

The problem: gradient descent on the two-block diagonal quadratic
L(w) = 1/2 sum_i k_i (w_i - 1)^2 in R^d, k_i = 1 on block a (the first d // 2 coordinates) and
k_i = lam on block b (the others), from w0 = 0. Each coordinate's error delta_i = w_i - 1 follows
delta' = (1 - eta k_i) delta, so the block errors e_a = sum_a delta_i^2 and e_b = sum_b delta_i^2
follow the closed recurrence e' = c e with c_a = (1 - eta)^2, c_b = (1 - eta lam)^2, and
L = (e_a + lam e_b) / 2: the reduced level is those 2 scalars, the full level the vector w (JAX +
optax on dynsim's full-level engine). Mode "noisy" adds N(0, sigma^2) noise to every gradient
coordinate; the expected block errors then follow e' = c e + eta^2 sigma^2 n (n the block's size).

Files: config.py (the config), levels.py (the two levels), hooks.py (the work the declarations name:
claims, derivation, sweep, post-processing), setting.py (the light record: every Level, Claims,
Derivation and SweepSpec, its code given as "module:attr" references). Registered by
`dynsim.register(SETTING)` (tests/test_two_level_setting.py).
"""
