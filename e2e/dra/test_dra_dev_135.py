"""dev with kubernetesVersion "1.35" (the minor new stacks default to) on a real Kubernetes 1.35 control plane.

The same tests as test_dra_dev.py, imported so pytest runs them in this module: the plan is validated
against 1.35's strict schema and rows of policies/dra_minors.json, the 1.35 API server must store every
object as sent, the 1.35 scheduler must allocate every claim template and the sample pod on the H200
node, a plain `nvidia.com/gpu: 1` pod stays Pending (DRAExtendedResource is off in 1.35), and
tools.verify (reading dev's stack file, whose expectations are this stack's) must pass and fail as on 1.34.

Run from the repository root: venv/bin/python -m pytest -q e2e/dra
"""

from __future__ import annotations

from test_dra_dev import (
    test_a_plain_nvidia_gpu_pod_is_served_by_dra_only_where_the_minor_has_extended_resources,
    test_api_server_accepts_every_object_of_the_plan,
    test_every_claim_template_is_allocated_on_a_group_that_serves_it,
    test_kubelet_plugin_lands_on_every_gpu_node,
    test_more_gpus_than_any_node_has_stays_unschedulable,
    test_sample_pod_runs_where_the_stack_means_it,
    test_stand_in_nodes_report_the_kubelet_version_of_the_control_plane,
    test_verifier_fails_on_a_gpu_node_without_slices,
    test_verifier_fails_on_a_gpu_node_without_the_kubelet_plugin_label,
    test_verifier_fails_on_a_node_advertising_the_legacy_gpu_resource,
    test_verifier_passes,
)

SCENARIO = "dev-135"
