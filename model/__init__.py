"""Protocol models and the Model contract. Imports nothing of kmc, explorers or reports."""
from kmc.model.contract import Model, ModelError, validate_model  # noqa: F401
