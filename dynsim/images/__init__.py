"""Experiments on real images (the digits scikit-learn ships): the papers' Section 6 in
miniature (docs/images.md)."""
