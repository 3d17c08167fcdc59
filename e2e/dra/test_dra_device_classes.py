"""The DeviceClasses every stack's claims name: the NVIDIA chart's three and Nebius's two, on the real API server.

The API server compiles each class's CEL selector on create. The chart's gpu.nvidia.com also carries
extendedResourceName at resource.k8s.io/v1; that field belongs to DRAExtendedResource, alpha and off
in Kubernetes 1.34, so the API server drops it: the report says whether it was kept.
"""

from __future__ import annotations

from dra_fakes import device_classes


def test_device_classes_are_accepted_with_their_selectors(classes):
    refused = {name: error for name, (error, _) in classes.items() if error}
    assert not refused, f"the API server refused DeviceClasses: {refused}"
    for manifest in device_classes():
        name = manifest["metadata"]["name"]
        stored = classes[name][1]
        assert stored["spec"]["selectors"] == manifest["spec"]["selectors"], (name, stored["spec"])
