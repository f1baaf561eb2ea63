"""The JSL setting (Jelassi, Sander, Li 2022), shared by the reduced and the full level."""

from . import data, model, partition
from .config import JSLConfig

__all__ = ["JSLConfig", "data", "model", "partition"]
