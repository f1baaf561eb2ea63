"""The MIM setting (Huang, Wen, Chi, Liang 2024), shared by the reduced and the full level."""

from . import data, embedding, model, partition
from .config import MIMConfig

__all__ = ["MIMConfig", "data", "embedding", "model", "partition"]
