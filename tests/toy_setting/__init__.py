"""A third, tiny setting defined entirely outside dynsim, as a user's package would define one:
linear teacher-student regression, whose reduction is the overlap with the teacher.

Full level: w in R^d trained by GD on L(w) = E_x[(w.x - w*.x)^2] / 2, x ~ N(0, I_d), |w*| = 1;
exactly L(w) = |w - w*|^2 / 2 (mode "exact"), or on a fresh batch of N samples each step (mode
"sampled"). Reduced level: the overlap m = <w, w*> and the squared norm s = |w|^2, which GD maps to
m' = m - eta (m - 1), s' = (1 - eta)^2 s + 2 eta (1 - eta) m + eta^2, with L = (s - 2 m + 1) / 2.
Registered by the entry point `toy = "tests.toy_setting.setting:SETTING"` (tests/test_toy_setting.py
writes it) or by `dynsim.register`.
"""
