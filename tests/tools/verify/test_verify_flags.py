"""The verifier's file, name, image and time-limit flags: a value no run could use is refused before the cluster is
asked (exit 2, naming the flag and what it takes), and no flag's file is written over another's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from components.shown import shown
from tests.kubeconfigs import kubeconfig_text
from tools.verify import __main__ as cli

FILE_FLAGS = ["--kubeconfig", "--json", "--burn-in-state", "--burn-in-floors"]


def refused_at_parsing(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        cli.parse_args(list(args))
    assert exit_.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("flag", FILE_FLAGS)
def test_an_empty_path_is_refused_by_flag_never_read_as_the_default_or_the_current_folder(flag, capsys, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", "/nonexistent/kubeconfig")
    assert f"argument {flag}: an empty path" in refused_at_parsing(capsys, flag, "")


def test_an_empty_context_is_refused_not_taken_for_the_current_one(capsys):
    assert "argument --context: an empty name" in refused_at_parsing(capsys, "--context", "")


@pytest.mark.parametrize("flag", ["--image", "--burn-in-image"])
@pytest.mark.parametrize("value", ["", "x\x1b[31m\nY", "x; rm -rf /", ".x"])
def test_an_image_flag_that_is_no_image_reference_is_refused_by_flag(flag, value, capsys):
    err = refused_at_parsing(capsys, flag, value)
    assert f"argument {flag}: got " in err and "allowed: an image reference" in err
    assert "\x1b" not in err


@pytest.mark.parametrize("flag", ["--image", "--burn-in-image"])
@pytest.mark.parametrize("tag", ["latest", "Latest", "main", "nightly"])
def test_an_image_flag_with_a_tag_that_moves_is_refused_as_the_stack_files_sample_image_is(flag, tag, capsys):
    """The newcomer's run: `--image nvidia/cuda:latest` was taken, though `sampleGpuImage` refuses it."""
    err = refused_at_parsing(capsys, flag, f"nvidia/cuda:{tag}")
    assert f'argument {flag}: "nvidia/cuda:{tag}" uses the tag {tag}, which moves' in err
    assert "pin a release tag or a digest" in err


def test_an_image_reference_is_taken():
    args = cli.parse_args(
        ["--image", "nvidia/cuda:13.1.1-base-ubuntu24.04", "--burn-in-image", "r.io/a/b@sha256:" + "0" * 64]
    )
    assert args.image == "nvidia/cuda:13.1.1-base-ubuntu24.04"


@pytest.mark.parametrize("value", ["", "x; rm -rf /", "all_reduce_perf", "/opt/bin/", "/opt/a b"])
def test_a_burn_in_binary_that_is_no_absolute_file_path_is_refused(value, capsys):
    err = refused_at_parsing(capsys, "--burn-in-binary", value)
    assert "argument --burn-in-binary: got " in err and "expected a file's absolute path in the image" in err


@pytest.mark.parametrize(
    "flag",
    [
        "--request-timeout",
        "--exec-plugin-timeout",
        "--timeout",
        "--metrics-timeout",
        "--run-timeout",
        "--burn-in-timeout",
    ],
)
@pytest.mark.parametrize("value", ["86401", "999999", "86400.5", "0", "0.0", "9" * 23, "1" + "0" * 400])
def test_a_time_limit_past_a_day_or_of_nothing_is_refused_by_flag(flag, value, capsys):
    assert f"argument {flag}: {shown(value)}: the limit must be a positive number of seconds, at most 86400" in (
        refused_at_parsing(capsys, flag, value)
    )


@pytest.mark.parametrize("value", ["1e300", "1_000", " 3", "+3", "-1", "\u0663", "0x10", "nan", "inf", "3.", ""])
def test_a_time_limit_spelt_other_than_in_ascii_digits_is_refused(value, capsys):
    """Attack round 4: float() took `1_000` as 1000 s, and other scripts' digits, which the stack file refuses."""
    err = refused_at_parsing(capsys, "--run-timeout", value)
    assert f"argument --run-timeout: {shown(value)} is not a number of seconds: give ASCII digits" in err


def test_a_time_limit_of_a_day_is_taken():
    assert cli.parse_args(["--exec-plugin-timeout", "86400"]).exec_plugin_timeout == 86400


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig_text("http://127.0.0.1:1", {"token": "t"}))
    return path


@pytest.mark.parametrize("flag", ["--json", "--burn-in-state", "--burn-in-floors"])
@pytest.mark.parametrize("spelling", ["same", "dotted", "link"])
def test_a_file_flag_naming_the_kubeconfig_is_refused_and_the_kubeconfig_is_left_as_it_was(
    kubeconfig, flag, spelling, capsys
):
    before = kubeconfig.read_text()
    other = {"same": kubeconfig, "dotted": kubeconfig.parent / "." / kubeconfig.name}.get(spelling)
    if other is None:
        other = kubeconfig.parent / "link"
        other.symlink_to(kubeconfig)
    status = cli.main(["--stack", "dev", "--skip-smoke", "--kubeconfig", str(kubeconfig), flag, str(other)])
    assert status == 2
    err = capsys.readouterr().err
    assert f'error: {flag} "{other}" names the same file as --kubeconfig "{kubeconfig}"' in err
    assert kubeconfig.read_text() == before


def test_the_report_naming_the_burn_in_state_is_refused(kubeconfig, tmp_path, capsys):
    state = tmp_path / "state.json"
    status = cli.main(
        [
            "--stack",
            "dev",
            "--skip-smoke",
            "--kubeconfig",
            str(kubeconfig),
            "--json",
            str(state),
            "--burn-in-state",
            str(state),
        ]
    )
    assert status == 2
    assert f'--json "{state}" names the same file as --burn-in-state "{state}"' in capsys.readouterr().err
    assert not state.exists()


def test_the_report_naming_the_kubeconfig_of_the_environment_is_refused(kubeconfig, monkeypatch, capsys):
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    before = kubeconfig.read_text()
    assert cli.main(["--stack", "dev", "--skip-smoke", "--json", str(kubeconfig)]) == 2
    assert "names the same file as the kubeconfig (--kubeconfig left out" in capsys.readouterr().err
    assert kubeconfig.read_text() == before


@pytest.mark.skipif(not os.path.exists("/proc/version"), reason="needs Linux /proc")
def test_an_existing_report_file_that_takes_no_write_is_refused_before_the_cluster_is_asked(kubeconfig, capsys):
    # As root the open succeeds; the write fails (Input/output error): it was found only after the whole run.
    status = cli.main(["--stack", "dev", "--skip-smoke", "--kubeconfig", str(kubeconfig), "--json", "/proc/version"])
    assert status == 2
    err = capsys.readouterr().err
    assert 'error: --json "/proc/version": cannot be written' in err
    assert "cluster" not in err.lower()  # refused before any request, not after the checks


def test_an_existing_report_file_is_left_as_it_was_by_the_check(kubeconfig, tmp_path, monkeypatch):
    report = tmp_path / "report.json"
    report.write_text("old report")
    monkeypatch.setattr(
        cli.KubeCluster, "from_kubeconfig", lambda *a, **k: (_ for _ in ()).throw(cli.ClusterError("stop"))
    )
    assert cli.main(["--stack", "dev", "--skip-smoke", "--kubeconfig", str(kubeconfig), "--json", str(report)]) == 2
    assert report.read_text() == "old report"


def test_a_report_path_in_a_symlink_loop_is_refused_by_flag_not_a_traceback(kubeconfig, tmp_path, capsys):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    status = cli.main(
        ["--stack", "dev", "--skip-smoke", "--kubeconfig", str(kubeconfig), "--json", str(tmp_path / "a")]
    )
    assert status == 2
    assert f"error: --json {shown(str(tmp_path / 'a'))}: Too many levels of symbolic links" in capsys.readouterr().err


def test_the_smoke_image_default_is_the_stacks_sample_gpu_image_as_help_and_verify_md_say(capsys):
    """Newcomer 4: --help said "a pinned CUDA base image", verify.md the stack's sampleGpuImage; the code takes the
    stack's, so both say that, and the stack's key reaches the smoke pods unless --image is given."""
    import yaml

    from components.config.stack_file import PROJECT_DIR
    from tools.verify.expectations import load_expectations

    with pytest.raises(SystemExit):
        cli.parse_args(["--help"])
    helped = " ".join(capsys.readouterr().out.split())
    assert "(default: the stack's nebius-dra:sampleGpuImage," in helped, helped
    declared = yaml.safe_load((PROJECT_DIR / "Pulumi.yaml").read_text())["config"]["nebius-dra:sampleGpuImage"]
    assert load_expectations("dev").smoke_image == declared["default"]
    assert load_expectations("dev", smoke_image="nvidia/cuda:12.8.0-base-ubuntu24.04").smoke_image.endswith(
        "12.8.0-base-ubuntu24.04"
    )
    verify_md = " ".join((PROJECT_DIR / "docs" / "verify.md").read_text().split())
    assert "with the stack's `sampleGpuImage` (`--image` to override)" in verify_md
