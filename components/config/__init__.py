"""User config -> models: every problem named by its key, before any resource is registered."""

from components.config.errors import ConfigError
from components.config.raw import read_raw_config
from components.config.stack import parse_stack_config

__all__ = ["ConfigError", "parse_stack_config", "read_raw_config"]
