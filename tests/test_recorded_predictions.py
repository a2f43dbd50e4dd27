"""One prediction per run: validate records the verdict ``crasp predict`` gives (with its strength,
budget and the user's programs), the store keeps it through export, import and repair, and the
report shows it, so the report and ``crasp predict`` agree on every row, for the suite's tasks and
for a user's."""

from __future__ import annotations

import json
import sqlite3
import sys

import pytest

from crasp.cli import main
from validation.config import ModelConfig, TrainConfig, ValidationError
from validation.reports import generalization as report
from validation.runs import protocol
from validation.runs.records import export, import_records
from validation.runs.store import Store, repair


@pytest.fixture
def tiny():
    """A preset of one seed, two steps, registered for the command line."""
    protocol.PRESETS["tiny"] = protocol.Preset("tiny", "tests", lambda task, variant: protocol.Plan(
        task, ModelConfig(1, 1, 16), TrainConfig(steps=2, batch_size=4, eval_every=2, test_size=8)),
        seeds=1, count_threshold=0.0)
    yield "tiny"
    del protocol.PRESETS["tiny"]


def _predicted(spec: str, scheme: str, *extra: str) -> tuple[str, str | None]:
    """The verdict and strength ``crasp predict SPEC --json`` gives ``scheme``."""
    import io

    out = io.StringIO()
    assert main(["predict", spec, "--json", "--quiet", *extra], out, io.StringIO()) == 0
    verdict = json.loads(out.getvalue())[scheme]
    return verdict["verdict"], verdict["strength"]


USER_TASKS = '''
import tasks

@tasks.task("more_c_test", symbols=("a", "c"), format="accept", replace=True, train_range=(1, 8),
            bins=((1, 8), (9, 16)), sampler=lambda n, rng: tuple(rng.choice(["a", "c"], size=n)))
def more_c(x):
    return x.count("c") > x.count("a")
'''


@pytest.mark.parametrize("spec", ["bin_majority", "parity", "unique_copy", "user_tasks_recorded:more_c_test"])
def test_report_and_predict_give_one_verdict_and_strength(spec, tiny, tmp_path, monkeypatch, capsys):
    (tmp_path / "user_tasks_recorded.py").write_text(USER_TASKS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    store = str(tmp_path / "runs")
    assert main(["validate", spec, "--variant", "ape", "--variant", "nope", "--preset", tiny, "--store", store,
                 "--device", "cpu"]) == 0
    err = capsys.readouterr().err
    name = spec.split(":")[-1]
    sys.modules.pop("user_tasks_recorded", None)  # the report needs no module: the runs recorded their prediction
    table = report.rows(Store(store))
    assert {row.variant for row in table} == {"ape", "nope"}
    monkeypatch.syspath_prepend(str(tmp_path))
    for row in table:
        assert (row.predicted, row.strength) == _predicted(spec, row.variant)
        assert row.prediction_source == "recorded when trained (budget default)"
        assert f"prediction: {name} {row.variant}: {row.prediction}" in err


def test_a_given_program_is_recorded_and_a_rejected_one_trains_nothing(tiny, tmp_path, capsys):
    good = tmp_path / "majority.cr"
    good.write_text('alphabet {"<bos>", "<eos>"}\nONES = #"1" > #"0"\nnext "1" = "<sep>" && ONES\n'
                    'next "0" = "<sep>" && !ONES\nnext "<eos>" = !"<sep>"\n')
    store = str(tmp_path / "runs")
    assert main(["validate", "bin_majority", "--program", str(good), "--preset", tiny, "--store", store,
                 "--device", "cpu"]) == 0
    (run,) = Store(store).runs()
    assert len(run.compared_with["prediction"]["programs"]) == 1
    assert report.rows(Store(store))[0].strength == _predicted("bin_majority", "ape", "--program", str(good))[1]
    wrong = tmp_path / "wrong.cr"
    wrong.write_text(good.read_text().replace('#"1" > #"0"', '#"1" < #"0"'))
    other = str(tmp_path / "other")
    capsys.readouterr()
    assert main(["validate", "bin_majority", "--program", str(wrong), "--preset", tiny, "--store", other,
                 "--device", "cpu"]) == 1
    assert "a given program was rejected" in capsys.readouterr().err
    assert not Store(other).runs()
    assert main(["validate", "bin_majority", "parity", "--program", str(good), "--preset", tiny, "--store", other,
                 "--device", "cpu"]) == 1
    assert "--program goes with one TASK" in capsys.readouterr().err


def test_what_a_run_is_compared_with_survives_export_import_and_repair(tiny, tmp_path):
    store = str(tmp_path / "runs")
    assert main(["validate", "parity", "--preset", tiny, "--store", store, "--device", "cpu"]) == 0
    (run,) = Store(store).runs()
    assert set(run.compared_with) == {"prediction", "baseline"} and len(run.compared_with["baseline"]) == 3
    records = tmp_path / "parity.records"
    export(Store(store), records)
    import_records(Store(tmp_path / "home"), records)
    (home,) = Store(tmp_path / "home").runs()
    assert home.compared_with == run.compared_with and home.trained_on == run.trained_on
    (tmp_path / "runs" / "runs.sqlite").write_bytes(b"not a database")  # the rows are lost: the checkpoints tell
    repair(store)
    (repaired,) = Store(store).runs()
    assert repaired.compared_with == run.compared_with and repaired.trained_on == run.trained_on


def test_runs_recorded_without_a_prediction_get_the_one_predict_gives_and_say_so(tiny, tmp_path):
    store = Store(tmp_path / "runs")
    assert main(["validate", "bin_majority", "--preset", tiny, "--store", str(store.root), "--device", "cpu"]) == 0
    (run,) = store.runs()
    with sqlite3.connect(store.root / "runs.sqlite") as db:  # as a store written before runs recorded it
        db.execute("DELETE FROM provenance")
    (row,) = report.rows(Store(store.root))
    assert (row.predicted, row.strength) == _predicted("bin_majority", "ape")
    assert row.prediction_source == "computed for this report (budget default): the runs recorded none"
    assert row.baseline == tuple(run.compared_with["baseline"])  # the same test sets, drawn again


def test_a_damaged_record_is_an_error_naming_it():
    from validation.runs.prediction import RecordedPrediction

    with pytest.raises(ValidationError, match="a recorded prediction cannot be read"):
        RecordedPrediction.from_json({"verdict": "generalizes"})
