"""Ask VTA's own compiler (the oracle of /work/shared/vta-oracle) to build ResNet-18's C2 with
virtual threads on one and on two axes; prints its answers (pinned in test_autotvm.py).
Not a test and not part of vtatune; run beside the project:

    /tmp/oldtvm/bin/python tests/export/vta_oracle_threads.py
"""

import copy
import os
import sys

sys.path.insert(0, "/work/shared/vta-oracle")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "passes"))

#: (tile_h, tile_w, tile_ci, tile_co), (oc_nthread, h_nthread) of C2 (56x56, 64 -> 64, 3x3).
CASES = [((8, 56, 1, 1), (2, 2)), ((8, 56, 1, 1), (2, 1)), ((8, 56, 1, 1), (1, 2)),
         ((4, 56, 1, 1), (2, 2)), ((2, 56, 1, 1), (2, 2)), ((14, 56, 1, 1), (2, 1)),
         ((14, 56, 1, 1), (1, 1))]


def main() -> None:
    import check_log as C  # noqa: N812
    import vta_compat
    from vta_oracle_cases import CONFIG

    vta = vta_compat.setup(CONFIG)
    from tvm import autotvm
    from tvm.autotvm.task.space import OtherOptionEntity, SplitEntity

    env = vta.get_env()
    C.register_vta_tuning_tasks(vta)
    h, w, cin, cout, k, pad, s = 56, 56, 64, 64, 3, 1, 1
    for (th, tw, tci, tco), (oc, hn) in CASES:
        args = [("TENSOR", (1, cin // 16, h, w, 1, 16), "int8"),
                ("TENSOR", (cout // 16, cin // 16, k, k, 16, 16), "int8"),
                (s, s), (pad,) * 4, (1, 1), "NCHW1n16c", "int32"]
        task = autotvm.task.create("conv2d_packed.vta", args=args, target=env.target)
        cfg = copy.deepcopy(task.config_space.get(0))
        oh, ow = (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1
        for name, ext, inner in (("tile_b", 1, 1), ("tile_h", oh, th), ("tile_w", ow, tw),
                                 ("tile_ci", cin // 16, tci), ("tile_co", cout // 16, tco)):
            cfg._entity_map[name] = SplitEntity([ext // inner, inner])
        cfg._entity_map["oc_nthread"] = OtherOptionEntity(oc)
        cfg._entity_map["h_nthread"] = OtherOptionEntity(hn)
        try:
            with env.target:
                sch, bufs = task.instantiate(cfg)
            vta.build(sch, bufs, target=env.target, target_host=env.target_host)
            answer = "OK"
        except Exception as e:  # noqa: BLE001
            answer = str(e).strip().splitlines()[-1][:160]
        print((th, tw, tco), "threads", oc, hn, "->", answer, flush=True)


if __name__ == "__main__":
    main()
