"""Ask VTA's own compiler (TVM 0.19 + VTA's Python package, the oracle of
/work/shared/vta-oracle) whether it builds conv2d layers under given knobs, and write its
answers (accept, or its exact error) to tests/passes/data/vta_oracle_conv2d.json.

Not a test and not part of vtatune (it imports TVM 0.19 and VTA); run it beside the project:

    /tmp/oldtvm/bin/python tests/passes/vta_oracle_cases.py tests/passes/data/vta_oracle_conv2d.json

Each case instantiates VTA's ``conv2d_packed.vta`` template (with the tune_relay_vta.py
epilogue: >>8, clip, int8) under the knobs and builds it with ``vta.build`` on the default
design (``pynq_1x16_i8w8a32_15_15_18_17``).
"""

import copy
import json
import sys

sys.path.insert(0, "/work/shared/vta-oracle")
import check_log as C  # noqa: E402
import vta_compat  # noqa: E402

CONFIG = {"TARGET": "pynq", "HW_VER": "0.0.2", "LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3,
          "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0, "LOG_BLOCK": 4, "LOG_UOP_BUFF_SIZE": 15,
          "LOG_INP_BUFF_SIZE": 15, "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17}

#: (H, W, Cin, Cout, k, pad, stride) of the layers probed (ResNet-18's and MobileNet's).
LAYERS = {
    "C2": (56, 56, 64, 64, 3, 1, 1), "C3": (56, 56, 64, 128, 3, 1, 2),
    "C4": (56, 56, 64, 128, 1, 0, 2), "C5": (28, 28, 128, 128, 3, 1, 1),
    "C7": (28, 28, 128, 256, 1, 0, 2), "C8": (14, 14, 256, 256, 3, 1, 1),
    "C9": (14, 14, 256, 512, 3, 1, 2), "C10": (14, 14, 256, 512, 1, 0, 2),
    "C11": (7, 7, 512, 512, 3, 1, 1), "PW112": (112, 112, 32, 64, 1, 0, 1),
    "PW14": (14, 14, 512, 512, 1, 0, 1),
}

#: (layer, tile_h, tile_w, tile_ci, tile_co): inner factors of VTA's splits.
CASES = [
    ("C8", 14, 14, 1, 1), ("C8", 14, 14, 2, 1), ("C8", 14, 14, 1, 2), ("C8", 7, 14, 1, 4),
    ("C8", 7, 7, 1, 1), ("C8", 7, 7, 1, 2), ("C8", 2, 14, 1, 8), ("C8", 14, 7, 1, 2),
    ("C8", 1, 14, 1, 2), ("C8", 14, 14, 16, 16), ("C8", 7, 7, 4, 1),
    ("C2", 8, 56, 1, 1), ("C2", 8, 56, 2, 1), ("C2", 14, 14, 1, 1), ("C2", 7, 28, 1, 2),
    ("C2", 4, 56, 1, 4), ("C3", 7, 28, 1, 2), ("C3", 14, 28, 1, 1), ("C3", 7, 14, 1, 2),
    ("C4", 14, 14, 4, 1), ("C4", 14, 28, 2, 1), ("C4", 1, 28, 4, 2), ("C4", 28, 28, 1, 8),
    ("C4", 7, 28, 1, 2), ("C4", 14, 14, 1, 1), ("C4", 1, 1, 2, 1), ("C4", 2, 1, 1, 1),
    ("C5", 14, 28, 1, 2), ("C5", 28, 28, 2, 1), ("C5", 7, 14, 1, 1),
    ("C7", 14, 14, 2, 2), ("C7", 7, 14, 1, 1), ("C7", 1, 14, 8, 2),
    ("C9", 7, 7, 1, 2), ("C9", 7, 7, 2, 1), ("C9", 1, 7, 1, 4),
    ("C10", 7, 7, 2, 2), ("C10", 7, 7, 1, 4), ("C10", 1, 7, 4, 1),
    ("C11", 7, 7, 1, 1), ("C11", 7, 7, 1, 4), ("C11", 7, 7, 2, 1), ("C11", 1, 7, 1, 2),
    ("PW112", 2, 112, 2, 4), ("PW112", 4, 56, 2, 1), ("PW112", 8, 112, 1, 2),
    ("PW112", 4, 56, 1, 2), ("PW14", 14, 14, 32, 2), ("PW14", 7, 14, 4, 4),
    ("PW14", 7, 7, 4, 1), ("PW14", 7, 7, 1, 1),
]


def main(out: str) -> None:
    vta = vta_compat.setup(CONFIG)
    from tvm import autotvm
    from tvm.autotvm.task.space import OtherOptionEntity, SplitEntity

    env = vta.get_env()
    C.register_vta_tuning_tasks(vta)
    answers = []
    for layer, th, tw, tci, tco in CASES:
        h, w, cin, cout, k, pad, s = LAYERS[layer]
        args = [("TENSOR", (1, cin // 16, h, w, 1, 16), "int8"),
                ("TENSOR", (cout // 16, cin // 16, k, k, 16, 16), "int8"),
                (s, s), (pad, pad, pad, pad), (1, 1), "NCHW1n16c", "int32"]
        task = autotvm.task.create("conv2d_packed.vta", args=args, target=env.target)
        cfg = copy.deepcopy(task.config_space.get(0))
        oh, ow = (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1
        for name, ext, inner in (("tile_b", 1, 1), ("tile_h", oh, th), ("tile_w", ow, tw),
                                 ("tile_ci", cin // 16, tci), ("tile_co", cout // 16, tco)):
            cfg._entity_map[name] = SplitEntity([ext // inner, inner])
        cfg._entity_map["oc_nthread"] = OtherOptionEntity(1)
        cfg._entity_map["h_nthread"] = OtherOptionEntity(1)
        try:
            with env.target:
                sch, bufs = task.instantiate(cfg)
            vta.build(sch, bufs, target=env.target, target_host=env.target_host)
            answer = "OK"
        except Exception as e:  # noqa: BLE001
            lines = str(e).strip().splitlines()
            answer = f"{type(e).__name__}: {lines[-1] if lines else ''}"
        print(layer, th, tw, tci, tco, "->", answer, flush=True)
        answers.append({"layer": layer, "shape": LAYERS[layer],
                        "knobs": {"tile_h": th, "tile_w": tw, "tile_ci": tci, "tile_co": tco},
                        "vta": answer})
    doc = {"command": "/tmp/oldtvm/bin/python tests/passes/vta_oracle_cases.py "
                      "tests/passes/data/vta_oracle_conv2d.json",
           "oracle": "TVM 0.19.0 + VTA's vta/python at apache/tvm db6d2059a2 "
                     "(/work/shared/vta-oracle), design pynq_1x16_i8w8a32_15_15_18_17",
           "cases": answers}
    with open(out, "w") as fh:
        json.dump(doc, fh, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
