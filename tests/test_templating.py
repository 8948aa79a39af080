"""mcugen's templates render without Jinja (codegen/templating.py compiles the subset of Jinja
they use to Python); Jinja itself, with the settings mcugen used, is the oracle.

- Every template a build renders, on the data of real builds that take its branches (NPU,
  external arena, weights file, several models and targets, the host harness), gives Jinja's
  text byte for byte.
- Small templates for each construct and each whitespace rule (trim_blocks, lstrip_blocks,
  `-` control, for-else, macros, namespaces, includes, `is defined`, `default`).
- The precompiled modules (mcugen/codegen/compiled) are what precompile.py writes now, and a
  template edited since its module was written is compiled in memory instead.
- What the subset lacks, and data a template names but lacks, are errors naming the template.
- A build imports no Jinja and writes nothing outside its output directory (no cache in ~).
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jinja2
import pytest
from conftest import REPO, public_model

from mcugen.cli import main
from mcugen.codegen import environment as environment_module
from mcugen.codegen.environment import TEMPLATES, Templates
from mcugen.codegen.generate import render_harness
from mcugen.codegen.precompile import COMPILED, expected_modules
from mcugen.codegen.templating import TemplateError, compile_template
from mcugen.driver import BuildOptions, compile_model

SETTINGS: dict[str, Any] = {"undefined": jinja2.StrictUndefined, "trim_blocks": True, "lstrip_blocks": True,
                            "keep_trailing_newline": True, "autoescape": False}


def jinja(loader: jinja2.BaseLoader) -> jinja2.Environment:
    return jinja2.Environment(loader=loader, **SETTINGS)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, dict[str, Any], str]]:
    """(template, data, mcugen's text) of every render of a few builds."""
    seen: list[tuple[str, dict[str, Any], str]] = []
    original = environment_module.Template.render

    def recording(self: environment_module.Template, data: dict[str, Any] | None = None, **more: Any) -> str:
        snapshot = copy.deepcopy({**(data or {}), **more})  # a build may change the data after
        text = original(self, data, **more)
        seen.append((self.name, snapshot, text))
        return text

    out = tmp_path_factory.mktemp("templating")
    fixture = REPO / "tests" / "fixtures" / "add_relu.tflite"
    builds = [
        [str(public_model("kws_dscnn")), "--target", "cortex-m4"],
        [str(public_model("ic_resnet8")), "--target", "cortex-m55", "--arena", "external", "--weights-file"],
        [str(public_model("vww_mobilenet_v1_025")), "--npu", "u55-128", "--pool", "fast:65536:fast"],
        [str(public_model("ad_autoencoder")), str(fixture), "--prefix", "ad", "--prefix", "addr"],
    ]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(environment_module.Template, "render", recording)
        for n, arguments in enumerate(builds):
            try:
                main(["build", *arguments, "-o", str(out / str(n))], standalone_mode=False)
            except SystemExit as done:
                assert done.code in (0, None)
        compiled = compile_model(public_model("kws_dscnn"), BuildOptions())
        render_harness(compiled.prefix, "kws_dscnn", compiled.graph)
    return seen


def test_every_template_renders_as_jinja_does(rendered: list[tuple[str, dict[str, Any], str]]) -> None:
    oracle = jinja(jinja2.FileSystemLoader(str(TEMPLATES)))
    top = {name for name, _, _ in rendered}
    # each top-level template (the others are included), several times with different data
    assert {"model.c.j2", "model.h.j2", "mcugen.mk.j2", "CMakeLists.txt.j2", "harness_main.c.j2",
            "npu/mcugen_npu_model.c.j2", "npu/mcugen_npu_model.h.j2"} <= top
    for name, data, text in rendered:
        assert text == oracle.get_template(name).render(data), name


def test_the_builds_took_the_optional_branches(rendered: list[tuple[str, dict[str, Any], str]]) -> None:
    sources = [text for name, _, text in rendered if name == "model.c.j2"]
    assert any("_init_arena(" in text for text in sources)  # external_arena.c.j2
    assert any("_weights_blob" in text for text in sources)  # weights_file.c.j2
    assert any("mcugen_npu_model.h" in text for text in sources)


CASES = {
    "trim": "{% if a %}\nyes\n{% endif %}\nafter\n",
    "lstrip": "  {% for x in xs %}\n    {{ x }}\n  {% endfor %}\nend",
    "lstrip_mid_line": "a {% if a %}b{% endif %} c\n  {{ a }} {% if a %}\n  x{% endif %}",
    "minus": "a   \n  {%- if a %} b {% endif -%}  \n\n c {{- a -}}   d",
    "plus": "  {%+ if a %}x{% endif +%}\ny",
    "comment": "a\n  {# note #}\nb {# inline #} c\n",
    "for_else": "{% for x in xs if x > 1 %}{{ x }},{% else %}none{% endfor %}|"
                "{% for x in [] %}{{ x }}{% else %}empty{% endfor %}",
    "tuples": "{% for k, v in pairs %}{{ k }}={{ v }};{% endfor %}",
    "macro": "{% macro m(a, b) %}\n[{{ a }}-{{ b }}]\n{% endmacro %}\n{{ m(1, xs | length) }}{{ m('q', a) }}",
    "namespace": "{% set ns = namespace(n=0) %}{% for x in xs %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.n }}",
    "set": "{% set d = {'a': 1, none: 2} %}{{ d[none] }} {{ d.a }} {% for x in xs %}{% set y = x * 2 %}{{ y }}{% endfor %}",
    "expressions": "{{ 7 // 2 }} {{ 7 % 4 }} {{ '%d!' % 5 }} {{ 'a' ~ 1 }} {{ -a + 2 }} {{ not a }} "
                   "{{ 1 if a else 2 }}<{{ 'x' if not a }}> {{ [xs | length, 9] | max }} {{ xs | join(', ') }} "
                   "{{ 3 in xs }} {{ 3 not in xs }} {{ (1, 2) }} {{ xs[0] }} {{ obj.real }} {{ pairs[0][1] }}",
    "tests": "{{ a is defined }} {{ nope is defined }} {{ obj.nope is defined }} {{ none is none }} "
             "{{ a is not none }} {{ obj.nope | default(4) }} {{ a | default(4) }}",
    "include": "{% for x in xs %}{% include 'inner' %}{% endfor %}{% set top = 5 %}{% include 'inner' %}",
    "elif": "{% for x in xs %}{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %}\n{% endfor %}",
}
INNER = "({{ x if x is defined else top }})\n"
DATA = {"a": 3, "xs": [1, 2, 3], "pairs": [("p", 1), ("q", 2)], "obj": 1.5}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_construct_renders_as_jinja_does(case: str, tmp_path: Path) -> None:
    oracle = jinja(jinja2.DictLoader({"t": CASES[case], "inner": INNER}))
    (tmp_path / "t").write_text(CASES[case])
    (tmp_path / "inner").write_text(INNER)
    ours = Templates(tmp_path, use_precompiled=False)
    assert ours.get_template("t").render(DATA) == oracle.get_template("t").render(DATA)


def test_precompiled_modules_are_current() -> None:
    """After editing a template: python -m mcugen.codegen.precompile."""
    written = {path.name: path.read_text(encoding="utf-8") for path in COMPILED.glob("t_*.py")}
    assert written == expected_modules()


def test_an_edited_template_is_compiled_not_taken_from_its_module(tmp_path: Path) -> None:
    (tmp_path / "stamp.j2").write_text("edited {{ version }}\n")
    assert Templates(tmp_path).get_template("stamp.j2").render(version="1") == "edited 1\n"
    current = Templates(TEMPLATES).get_template("stamp.j2").function
    assert current.__module__.startswith("mcugen.codegen.compiled.")


@pytest.mark.parametrize("source, message", [
    ("{% raw %}x{% endraw %}", "t:1: `{% raw %}` is not supported"),
    ("a\n{{ x | upper }}", "t:2: filter `upper` is not supported"),
    ("{{ x is even }}", "test `even` is not supported"),
    ("{% if x %}", "`if` not closed"),
    ("{% endfor %}", "`endfor` without its `for`"),
    ("{{ x", "tag not closed"),
])
def test_what_the_subset_lacks_is_an_error_naming_the_place(source: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message.replace("|", r"\|").replace("{", r"\{")
                       .replace("}", r"\}").replace("(", r"\(").replace(")", r"\)")):
        compile_template(source, "t")


def test_data_a_template_lacks_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "t").write_text("{{ here }} {{ absent }}")
    (tmp_path / "u").write_text("{{ obj.absent }}")
    with pytest.raises(TemplateError, match="template t uses 'absent'"):
        Templates(tmp_path).get_template("t").render(here=1)
    with pytest.raises(TemplateError, match="`absent`"):
        Templates(tmp_path).get_template("u").render(obj=1)


def test_a_build_writes_only_its_output_and_imports_no_jinja(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"),
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("MCUGEN_CACHE_DIR", None)
    script = ("import sys\nfrom mcugen.cli import main\n"
              f"try:\n    main(['build', {str(public_model('kws_dscnn'))!r}, '-o', {str(tmp_path / 'out')!r}])\n"
              "except SystemExit as done:\n    assert done.code in (0, None)\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jinja2', 'markupsafe')))\n")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"
    assert list(home.rglob("*")) == []
    assert (tmp_path / "out" / "kws_dscnn_model.c").exists()

