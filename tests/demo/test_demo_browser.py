"""The demo pages in a real browser: Debian's Chromium driven by Playwright for Python.

Chromium comes from Debian's ``chromium`` package (``.ci/run`` installs it, as
the README's test command does); ``SPARSEKERNEL_CHROMIUM`` may point to
another binary. Screenshots of every preset go to ``build/demo-screenshots``
(or ``SPARSEKERNEL_SCREENSHOTS``).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import sync_playwright

from sparsekernel.demo import make_server
from sparsekernel.demo.presets import SVM_PRESETS, svm_preset
from sparsekernel.formulations import MACHINES
from sparsekernel.kernels import RBF, Linear
from sparsekernel.methods import solve_by

CHROMIUM = os.environ.get("SPARSEKERNEL_CHROMIUM", "/usr/bin/chromium")
SHOTS = Path(os.environ.get("SPARSEKERNEL_SCREENSHOTS", Path(__file__).resolve().parents[2] / "build" / "demo-screenshots"))
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def base_url():
    server = make_server(0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    assert Path(CHROMIUM).exists(), f"Chromium must be installed at {CHROMIUM} (Debian: apt-get install chromium)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.errors = []
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()


def open_page(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function("window.demo && window.demo.ready", timeout=30000)


def settle(page, solves_before: int) -> None:
    """Wait until the page has answered at least one more solve and is no longer busy."""
    page.wait_for_function(f"window.demo.solves > {solves_before} && !document.body.classList.contains('busy')",
                           timeout=30000)


def library_support(spec: dict) -> int:
    """The library's own answer for a preset's data: number of support vectors by the SMO."""
    cls = MACHINES[spec["machine"]]
    P = np.asarray(spec["points"], dtype=float)
    kernel = Linear() if spec["kernel"] == "linear" else RBF(spec["gamma"])
    hyper = {k: spec[k] for k in ("C", "nu", "epsilon") if k in cls._hyper_names and k in spec}
    if cls.task == "regression":
        machine = cls(P[:, :1], P[:, 1], kernel, **hyper)
    else:
        machine = cls(P[:, :2], P[:, 2], kernel, **hyper)
    return solve_by(machine, "smo").n_support


@pytest.mark.parametrize("number", list(SVM_PRESETS))
def test_svm_presets_load_cleanly_and_circle_the_librarys_support_vectors(page, base_url, number: int) -> None:
    open_page(page, f"{base_url}/svm?preset={number}")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"svm-preset-{number}.png"))
    assert page.errors == []
    circled = int(page.get_attribute("#plot", "data-support-count"))
    assert circled == library_support(svm_preset(number))
    assert page.text_content("#n-support") == str(circled)
    kkt = page.evaluate("window.demo.result.kkt")
    assert kkt["ok"] and all(row["ok"] for row in kkt["rows"])
    assert kkt["gap"]["relative"] <= kkt["tol"]
    cells = page.locator("#kkt td.PASS")
    assert cells.count() == len(kkt["rows"]) and page.locator("#kkt td.FAIL").count() == 0
    assert page.text_content("#kkt-ok") == "PASS"


def _drag(page, n: int, dx: float, dy: float) -> None:
    """Drag point n by (dx, dy) data units with the mouse."""
    box = page.locator("#plot").bounding_box()
    start = page.evaluate(f"window.demo.pointPixel({n})")
    x, y = page.evaluate(f"window.demo.state.points[{n}].slice(0, 2)")
    end = page.evaluate(f"[window.demo.plot.px({x + dx}), window.demo.plot.py({y + dy})]")
    scale = box["width"] / page.evaluate("document.getElementById('plot').width")
    before = page.evaluate("window.demo.solves")
    page.mouse.move(box["x"] + start[0] * scale, box["y"] + start[1] * scale)
    page.mouse.down()
    for k in range(1, 6):
        page.mouse.move(box["x"] + (start[0] + (end[0] - start[0]) * k / 5) * scale,
                        box["y"] + (start[1] + (end[1] - start[1]) * k / 5) * scale)
    page.mouse.up()
    settle(page, before)


def test_preset_6_only_the_support_vectors_matter(page, base_url) -> None:
    open_page(page, f"{base_url}/svm?preset=6")
    result = page.evaluate("window.demo.result")
    points = np.asarray(page.evaluate("window.demo.state.points"))
    X, t = points[:, :2], points[:, 2]
    w = X.T @ (np.asarray(result["a"]) * t)                  # linear kernel: w = sum_n a_n t_n x_n
    support = set(result["support"])
    outside = [n for n in range(len(t)) if n not in support]
    n = max(outside, key=lambda k: t[k] * (X[k] @ w + result["b"]))
    step = 0.4 * t[n] * w / np.linalg.norm(w)               # away from the boundary: stays outside the margin
    _drag(page, n, float(step[0]), float(step[1]))
    moved = page.evaluate("window.demo.result")
    assert page.evaluate(f"window.demo.state.points[{n}][0]") == pytest.approx(X[n, 0] + step[0], abs=0.05)
    assert moved["b"] == pytest.approx(result["b"], abs=1e-6)
    np.testing.assert_allclose(moved["a"], result["a"], atol=1e-6)
    sv = sorted(support)[0]
    toward = -0.5 * t[sv] * w / np.linalg.norm(w)          # into the margin: the boundary must move
    _drag(page, sv, float(toward[0]), float(toward[1]))
    after = page.evaluate("window.demo.result")
    assert abs(after["b"] - result["b"]) > 1e-3 or np.max(np.abs(np.asarray(after["a"]) - result["a"])) > 1e-3
    assert page.errors == []
    page.screenshot(path=str(SHOTS / "svm-preset-6-dragged.png"))


def test_a_bad_parameter_shows_its_message(page, base_url) -> None:
    open_page(page, f"{base_url}/svm?preset=2")
    before = page.evaluate("window.demo.solves")
    page.fill("#gamma-text", "-1")
    page.dispatch_event("#gamma-text", "change")
    settle(page, before)
    message = page.locator("#message")
    assert "gamma must be in (0, 1e+06]; got -1" in message.text_content()
    assert message.get_attribute("class") == "error"
    page.screenshot(path=str(SHOTS / "svm-bad-parameter.png"))
    before = page.evaluate("window.demo.solves")
    page.fill("#gamma-text", "0.8")
    page.dispatch_event("#gamma-text", "change")
    settle(page, before)
    assert page.get_attribute("#message", "class") == "hint"


def test_clicks_add_and_delete_points_and_steps_play_the_smo(page, base_url) -> None:
    open_page(page, f"{base_url}/svm?preset=1")
    box = page.locator("#plot").bounding_box()
    count = page.evaluate("window.demo.state.points.length")
    before = page.evaluate("window.demo.solves")
    page.keyboard.down("Shift")
    page.mouse.click(box["x"] + 80, box["y"] + 60)
    page.keyboard.up("Shift")
    settle(page, before)
    assert page.evaluate("window.demo.state.points.length") == count + 1
    assert page.evaluate("window.demo.state.points.at(-1)[2]") == -1
    start = page.evaluate(f"window.demo.pointPixel({count})")
    before = page.evaluate("window.demo.solves")
    page.mouse.click(box["x"] + start[0] * box["width"] / 620, box["y"] + start[1] * box["height"] / 520, button="right")
    settle(page, before)
    assert page.evaluate("window.demo.state.points.length") == count
    page.click("#step-start")
    page.wait_for_function("document.getElementById('step-info').textContent.startsWith('step 1 of')")
    page.click("#step-next")
    info = page.text_content("#step-info")
    assert info.startswith("step 2 of") and "clip [L, H]" in info and "objective" in info
    assert page.errors == []


def library_relevance(spec: dict) -> tuple[int, int | None]:
    """The library's answer for an RVM preset: relevance vectors (and the nu-SVC's support vectors)."""
    import warnings

    from sparsekernel.errors import ConvergenceWarning
    from sparsekernel.formulations import NuSVC
    from sparsekernel.solvers.rvm import rvm_classification, rvm_regression

    P = np.asarray(spec["points"], dtype=float)
    kernel = RBF(spec["gamma"])
    if spec["task"] == "regression":
        X, t = P[:, :1], P[:, 1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = rvm_regression(kernel(X, X), t, method=spec["method"], max_iter=spec.get("steps"), tol=1e-6)
        return len(fit.relevance), None
    X, labels = P[:, :2], (P[:, 2] == P[:, 2].max()).astype(float)
    fit = rvm_classification(kernel(X, X), labels, method=spec["method"], tol=1e-6)
    svs = None
    if spec.get("compare_svm"):
        svs = solve_by(NuSVC(X, 2 * labels - 1, kernel, nu=spec["nu"]), "smo").n_support
    return len(fit.relevance), svs


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_rvm_presets_load_cleanly_and_circle_the_librarys_relevance_vectors(page, base_url, number: int) -> None:
    from sparsekernel.demo.presets import rvm_preset

    open_page(page, f"{base_url}/rvm?preset={number}")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"rvm-preset-{number}.png"))
    assert page.errors == []
    relevance, svs = library_relevance(rvm_preset(number))
    assert int(page.get_attribute("#plot", "data-relevance-count")) == relevance
    assert page.text_content("#n-relevance") == str(relevance)
    if svs is not None:
        assert page.text_content("#n-support") == str(svs)
        assert relevance < svs  # the RVM is the sparser (Figures 7.4 and 7.12)


def test_rvm_preset_2_steps_the_re_estimation(page, base_url) -> None:
    open_page(page, f"{base_url}/rvm?preset=2")
    kept = [int(page.get_attribute("#plot", "data-relevance-count"))]
    evidence = [page.evaluate("window.demo.result.log_evidence.at(-1)")]
    for _ in range(6):
        before = page.evaluate("window.demo.solves")
        page.click("#step-next")
        settle(page, before)
        kept.append(int(page.get_attribute("#plot", "data-relevance-count")))
        evidence.append(page.evaluate("window.demo.result.log_evidence.at(-1)"))
    assert page.text_content("#step-info") == "after 7 update(s) of (7.87)-(7.88)"
    assert kept[-1] < kept[0]                       # alphas run off to infinity: functions are pruned
    assert evidence[-1] > evidence[0]               # and the evidence rises
    before = page.evaluate("window.demo.solves")
    page.click("#step-run")
    settle(page, before)
    assert int(page.get_attribute("#plot", "data-relevance-count")) <= kept[-1]
    assert page.errors == []
    page.screenshot(path=str(SHOTS / "rvm-preset-2-stepped.png"))


def test_rvm_bad_parameter_shows_its_message(page, base_url) -> None:
    open_page(page, f"{base_url}/rvm?preset=1")
    before = page.evaluate("window.demo.solves")
    page.fill("#gamma-text", "0")
    page.dispatch_event("#gamma-text", "change")
    settle(page, before)
    assert "gamma must be in (0, 1e+06]; got 0" in page.text_content("#message")
    assert page.get_attribute("#message", "class") == "error"


def _labels_apart(page, canvas: str) -> list[dict]:
    """The tick labels a small plot drew: none cut off at the left edge, none on top of another."""
    labels = sorted(page.evaluate(f"JSON.parse(document.getElementById('{canvas}').dataset.labels)"), key=lambda l: l["y"])
    assert labels and all(label["left"] >= 0 for label in labels), labels
    assert all(b["y"] - a["y"] >= 11 for a, b in zip(labels, labels[1:])), labels
    return labels


def test_rvm_evidence_scale_breaks_for_the_first_iterations_and_labels_stay_apart(page, base_url) -> None:
    open_page(page, f"{base_url}/rvm?preset=1")
    evidence = page.evaluate("window.demo.result.log_evidence.filter((v) => v !== null)")
    off = int(page.get_attribute("#history", "data-off-scale"))
    assert 1 <= off <= max(1, int(np.ceil(0.2 * len(evidence))))
    assert evidence[0] < min(evidence[off:])          # the first value is the one off the scale
    assert "below it" in page.text_content("#history-note")
    labels = _labels_apart(page, "history")
    assert [l["text"] for l in labels][0] == f"{max(evidence):.3f}"
    alphas = _labels_apart(page, "alphas")
    assert alphas[0]["text"] == "∞" and alphas[1]["text"] == "4"
    assert page.errors == []
    page.screenshot(path=str(SHOTS / "rvm-preset-1-evidence.png"))


def test_svm_gap_is_one_signed_number_and_the_smo_button_says_what_gap_7_3_is(page, base_url) -> None:
    import re

    for number in (1, 2):
        open_page(page, f"{base_url}/svm?preset={number}")
        text = page.text_content("#gap")
        gap = page.evaluate("window.demo.result.gap")
        if gap["relative"] < 1e-12:
            assert text.startswith("0 (below 1e-12 relative")
        else:
            absolute, relative = re.fullmatch(r"(\S+) \(relative (\S+)\)", text).groups()
            assert (float(absolute) < 0) == (float(relative) < 0) == (gap["absolute"] < 0)
    assert "Filling the gap 7.3" in page.text_content("#step-start")
    assert page.errors == []


@pytest.mark.parametrize("name, text", [
    ("points.txt", "".join(f"{1 if k % 2 else -1} 1:{0.1 * k:.2f} 2:{(-1) ** k * 0.5:.2f}\n" for k in range(12))),
    ("points.txt", "".join(f"{0.1 * k:.2f},{(-1) ** k * 0.5:.2f},{k % 2}\n" for k in range(12))),
])
def test_an_uploaded_txt_file_is_read_by_the_command_lines_rule(page, base_url, name: str, text: str) -> None:
    """`.txt` is LIBSVM or CSV by its first data line, as on the command line (datasets.infer_format):
    both files load their twelve points, labels mapped to -1/+1."""
    open_page(page, f"{base_url}/svm?preset=2")
    before = page.evaluate("window.demo.solves")
    page.set_input_files("#file", files=[{"name": name, "mimeType": "text/plain", "buffer": text.encode()}])
    settle(page, before)
    points = page.evaluate("window.demo.state.points")
    assert len(points) == 12 and sorted({p[2] for p in points}) == [-1, 1]
    assert [round(p[0], 2) for p in points] == [round(0.1 * k, 2) for k in range(12)]
    assert not page.errors
