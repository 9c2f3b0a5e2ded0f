"""Networks as workloads: named layers with counts, and network search spaces.

``network`` holds the layer list (parsed through the workload registry), ``space`` the
network search space (``spaces/<network>.toml``: one accelerator for every layer).
"""

from __future__ import annotations

from vtatune.networks.network import Layer, Network, Unit
from vtatune.networks.space import InnerSettings, NetworkSpace, is_network_file, load

__all__ = ["InnerSettings", "Layer", "Network", "NetworkSpace", "Unit", "is_network_file",
           "load"]
