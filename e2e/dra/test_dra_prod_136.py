"""prod with kubernetesVersion "1.36" on a real Kubernetes 1.36 control plane.

The same tests as test_dra_prod.py, imported so pytest runs them in this module (its broken-template
namespace fixture too), against the 1.36 API server and scheduler.

Run from the repository root: venv/bin/python -m pytest -q e2e/dra
"""

from __future__ import annotations

from test_dra_prod import (
    broken_namespace,
    test_api_server_accepts_every_object_of_the_plan,
    test_cel_type_error_is_refused_by_the_api_server,
    test_cel_type_error_is_refused_by_the_stack_config_too,
    test_every_claim_template_is_allocated_on_a_group_that_serves_it,
    test_gpu_nic_aligned_pairs_a_gpu_and_a_nic_on_one_pcie_root,
    test_impossible_match_attribute_is_never_allocated,
    test_kubelet_plugin_lands_on_every_gpu_node,
    test_match_attribute_of_one_driver_over_another_drivers_device_is_never_allocated,
    test_more_gpus_than_any_node_has_stays_unschedulable,
    test_no_sample_pods,
    test_stand_in_nodes_report_the_kubelet_version_of_the_control_plane,
    test_unknown_device_class_is_never_allocated,
    test_verifier_passes,
    test_whole_node_template_takes_every_gpu_and_infiniband_nic,
)

SCENARIO = "prod-136"
