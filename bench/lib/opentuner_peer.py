"""OpenTuner (PyPI 0.8.8) as a peer of bench/search.py: a placement of T tasks
on V contexts is the first T entries of a permutation of the V contexts
(OpenTuner's PermutationParameter, with its swap, PMX, CX and OX operators
under its bandit of techniques), one measurement a configuration, the
objective the throughput (reported as a negative time, OpenTuner minimises).
Its results database lives in memory."""
from __future__ import annotations

import argparse
import logging

import numpy as np


def search(ledger, seed: int) -> None:
    import random

    import opentuner
    import opentuner.tuningrunmain as trm
    from opentuner import ConfigurationManipulator, MeasurementInterface, Result
    from opentuner.api import TuningRunManager
    from opentuner.search.manipulator import PermutationParameter

    import warnings

    warnings.filterwarnings("ignore", module="opentuner")
    warnings.filterwarnings("ignore", category=Warning, module="sqlalchemy")
    logging.getLogger("opentuner").setLevel(logging.ERROR)
    # its logging config writes opentuner.log into the working directory: nowhere, and quiet
    trm.the_logging_config["handlers"]["file"]["filename"] = "/dev/null"
    trm.the_logging_config["handlers"]["console"]["level"] = "ERROR"
    random.seed(seed)
    np.random.seed(seed % (2 ** 32))
    sp = ledger.space
    if sp.allow_colocate:
        raise ValueError("the OpenTuner peer places tasks without co-location only")

    class Placement(MeasurementInterface):
        def manipulator(self):
            m = ConfigurationManipulator()
            m.add_parameter(PermutationParameter("p", list(range(sp.n_contexts))))
            return m

        def run(self, desired_result, input, limit):  # not called: the manager below drives it
            raise NotImplementedError

    args = opentuner.default_argparser().parse_args([])
    args.database = "sqlite://"
    args.no_dups = False
    manager = TuningRunManager(Placement(args), args)
    try:
        while ledger.remaining > 0:
            dr = manager.get_next_desired_result()
            if dr is None:
                continue
            ctx = np.asarray(dr.configuration.data["p"][: sp.n_tasks], dtype=np.int64)
            value = ledger.measure(sp.keys(ctx[None, :]), [ctx])[0]
            manager.report_result(dr, Result(time=-value if value is not None else 0.0))
    finally:
        manager.finish()
