"""The training harness: real transformers trained on a task, accuracy per length bin, and the
report that sets it beside the prediction and the published numbers.

One run flows through the sub-packages in order, each importing only those before it:

* :mod:`validation.config` (with :mod:`validation.positions`): the model, the training settings
  and the positional variant of a run;
* :mod:`validation.data`: the task's vocabulary and batches (:mod:`~validation.data.encoding`),
  the test sets and the training examples drawn on the host (:mod:`~validation.data.streams`);
* :mod:`validation.models`: the decoder, the encoder-decoder and their layers, attention biases,
  and :mod:`~validation.models.build`, which builds and loads them;
* :mod:`validation.training`: a group of seeds trained together (:mod:`~validation.training.group`),
  its optimizer step and the device it runs on;
* :mod:`validation.runs`: what a run is (:mod:`~validation.runs.spec`), the presets that plan runs
  (:mod:`~validation.runs.protocol`), the store that keeps them, and the sweeps and executors
  that train them (:func:`validation.runs.sweep.validate`);
* :mod:`validation.reports`: statistics over seeds and the reports written from the store;
* :mod:`validation.experiments`: the arithmetic papers' claims, the depth and training-length
  experiments, and the demo;
* :mod:`validation.cli`: the ``crasp validate``, ``report``, ``arithmetic`` and ``demo`` commands.
"""
