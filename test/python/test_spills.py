"""No shipped kernel spills registers (issue 40, item 7), from the manifests'
ptxas figures (no GPU needed)."""
import pytest

import sparse_mla


def spill_report(kernels):
    """(why the check cannot run, or None; the problems found) for manifest
    entries by name. sparse-mla-emit-kernels records ptxas's spill_stores
    and spill_loads only where ptxas ran."""
    if not kernels:
        return "no kernel manifests to check", []
    has = {name: "spill_stores" in k and "spill_loads" in k for name, k in kernels.items()}
    if not any(has.values()):
        return "the manifests carry no ptxas figures (built without ptxas)", []
    # Manifests with figures for some kernels and not others would leave
    # those unchecked.
    problems = [f"{name}: no ptxas figures" for name in sorted(kernels) if not has[name]]
    problems += [f"{name}: {k['spill_stores']} B spill stores, {k['spill_loads']} B spill loads"
                 for name, k in sorted(kernels.items())
                 if has[name] and (k["spill_stores"] or k["spill_loads"])]
    return None, problems


def test_no_shipped_kernel_spills():
    # Every kernel of the bundle's (or the installed wheel's) manifests: the
    # shipped ones. A spill in a kernel's loop costs local-memory traffic
    # every block; one outside it is a sign the next change will put one in.
    skip, problems = spill_report(sparse_mla.load_manifest())
    if skip:
        pytest.skip(skip)
    assert not problems, "kernels that spill:\n  " + "\n  ".join(problems)


def test_the_report_names_what_spills_and_what_was_not_checked():
    clean = dict(spill_stores=0, spill_loads=0, registers=255)
    assert spill_report({"a": clean}) == (None, [])
    assert spill_report({"a": clean, "b": dict(clean, spill_stores=8, spill_loads=4)}) == (
        None, ["b: 8 B spill stores, 4 B spill loads"])
    assert spill_report({"a": clean, "b": {}}) == (None, ["b: no ptxas figures"])
    assert spill_report({"a": {}, "b": {}})[0].startswith("the manifests carry no ptxas figures")
    assert spill_report({})[0] == "no kernel manifests to check"
