BEGIN TRANSACTION;
CREATE TABLE vt_candidates (
	id INTEGER NOT NULL, 
	"key" VARCHAR(1024) NOT NULL, 
	workload VARCHAR(255) NOT NULL, 
	hw_key VARCHAR(255) NOT NULL, 
	hw JSON NOT NULL, 
	hw_name VARCHAR(255) NOT NULL, 
	knobs JSON NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	reason TEXT NOT NULL, 
	cycles BIGINT, 
	seconds FLOAT, 
	counters JSON NOT NULL, 
	bounds JSON NOT NULL, 
	efficiency FLOAT, 
	area_mm2 FLOAT, 
	resources JSON NOT NULL, 
	compile_ms FLOAT, 
	sim_ms FLOAT, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE ("key")
);
INSERT INTO "vt_candidates" VALUES(1,'dense_m16_k64_n64|3_3_5_1_5_5_15_14_15_16|oc_nthread=2,tile_b=4,tile_ci=1,tile_co=1','dense_m16_k64_n64','3_3_5_1_5_5_15_14_15_16','{"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 1, "LOG_BLOCK_IN": 5, "LOG_BLOCK_OUT": 5, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 14, "LOG_WGT_BUFF_SIZE": 15, "LOG_ACC_BUFF_SIZE": 16}','2x32x32-i16w32a64u32','{"tile_b": 4, "tile_ci": 1, "tile_co": 1, "oc_nthread": 2}','no_fit','does not fit pynq-z1: lut 402% (213889/53200), bram36 215% (301.5/140)',NULL,NULL,'{}','{}',NULL,1.75534290000000027021e+02,'{"lut": 213889.0, "ff": 81744.0, "bram36": 301.5, "dsp": 0.0, "logic_kind": "lut", "bram_kind": "bram36", "fits": false, "over": ["lut", "bram36"], "utilization": {"lut": 402.046992481203, "ff": 76.82706766917293, "bram36": 215.35714285714286, "dsp": 0.0}}',NULL,NULL,'2026-11-23 04:56:38.349082');
INSERT INTO "vt_candidates" VALUES(2,'dense_m16_k64_n64|3_3_5_0_3_4_15_14_16_18|hardware','dense_m16_k64_n64','3_3_5_0_3_4_15_14_16_18','{"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0, "LOG_BLOCK_IN": 3, "LOG_BLOCK_OUT": 4, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 14, "LOG_WGT_BUFF_SIZE": 16, "LOG_ACC_BUFF_SIZE": 18}','1x8x16-i16w64a256u32','{}','hw_invalid','hardware: ALU instruction needs 144 bits with 64-bit word alignment > 128',NULL,NULL,'{}','{}',NULL,NULL,'{}',NULL,NULL,'2026-11-23 04:56:38.370381');
INSERT INTO "vt_candidates" VALUES(3,'dense_m16_k64_n64|3_3_5_0_3_3_15_16_18_14|hardware','dense_m16_k64_n64','3_3_5_0_3_3_15_16_18_14','{"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0, "LOG_BLOCK_IN": 3, "LOG_BLOCK_OUT": 3, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 16, "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 14}','1x8x8-i64w256a16u32','{}','hw_invalid','hardware: GEMM instruction needs 140 bits with 64-bit word alignment > 128; GEMM micro-op needs 34 bits > 32',NULL,NULL,'{}','{}',NULL,NULL,'{}',NULL,NULL,'2026-11-23 04:56:38.379076');
INSERT INTO "vt_candidates" VALUES(4,'dense_m16_k64_n64|3_3_5_0_5_4_15_13_16_15|oc_nthread=1,tile_b=4,tile_ci=1,tile_co=4','dense_m16_k64_n64','3_3_5_0_5_4_15_13_16_15','{"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0, "LOG_BLOCK_IN": 5, "LOG_BLOCK_OUT": 4, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 13, "LOG_WGT_BUFF_SIZE": 16, "LOG_ACC_BUFF_SIZE": 15}','1x32x16-i8w64a32u32','{"tile_b": 4, "tile_ci": 1, "tile_co": 4, "oc_nthread": 1}','no_fit','does not fit pynq-z1: lut 117% (62008/53200), bram36 106% (148.5/140)',NULL,NULL,'{}','{}',NULL,52.31628,'{"lut": 62008.0, "ff": 34912.0, "bram36": 148.5, "dsp": 0.0, "logic_kind": "lut", "bram_kind": "bram36", "fits": false, "over": ["lut", "bram36"], "utilization": {"lut": 116.55639097744361, "ff": 32.81203007518797, "bram36": 106.07142857142857, "dsp": 0.0}}',NULL,NULL,'2026-11-23 04:56:38.418546');
INSERT INTO "vt_candidates" VALUES(5,'dense_m16_k64_n64|3_3_5_2_4_3_15_14_18_14|oc_nthread=1,tile_b=1,tile_ci=1,tile_co=2','dense_m16_k64_n64','3_3_5_2_4_3_15_14_18_14','{"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 2, "LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 3, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 14, "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 14}','4x16x8-i16w256a16u32','{"tile_b": 1, "tile_ci": 1, "tile_co": 2, "oc_nthread": 1}','no_fit','does not fit pynq-z1: lut 124% (65768/53200)',NULL,NULL,'{}','{}',NULL,5.7548880000000004033e+01,'{"lut": 65768.0, "ff": 34448.0, "bram36": 109.0, "dsp": 0.0, "logic_kind": "lut", "bram_kind": "bram36", "fits": false, "over": ["lut"], "utilization": {"lut": 123.62406015037594, "ff": 32.37593984962406, "bram36": 77.85714285714286, "dsp": 0.0}}',NULL,NULL,'2026-11-23 04:56:38.486148');
INSERT INTO "vt_candidates" VALUES(6,'dense_m16_k64_n64|3_3_5_0_3_4_15_13_17_18|hardware','dense_m16_k64_n64','3_3_5_0_3_4_15_13_17_18','{"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0, "LOG_BLOCK_IN": 3, "LOG_BLOCK_OUT": 4, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 13, "LOG_WGT_BUFF_SIZE": 17, "LOG_ACC_BUFF_SIZE": 18}','1x8x16-i8w128a256u32','{}','hw_invalid','hardware: ALU instruction needs 144 bits with 64-bit word alignment > 128',NULL,NULL,'{}','{}',NULL,NULL,'{}',NULL,NULL,'2026-11-23 04:56:38.679621');
INSERT INTO "vt_candidates" VALUES(7,'dense_m16_k64_n64|3_3_5_0_4_4_15_15_18_17|oc_nthread=1,tile_b=4,tile_ci=1,tile_co=1','dense_m16_k64_n64','3_3_5_0_4_4_15_15_18_17','{"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0, "LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 15, "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17}','1x16x16-i32w256a128u32','{"tile_b": 4, "tile_ci": 1, "tile_co": 1, "oc_nthread": 1}','ok','',36219,0.00036219,'{"inp_load_nbytes": 4096, "wgt_load_nbytes": 16384, "acc_load_nbytes": 0, "uop_load_nbytes": 4, "out_store_nbytes": 1024, "gemm_counter": 256, "alu_counter": 192, "instructions": 294, "load_busy": 24480.0, "compute_busy": 11397.0, "store_busy": 2892.0}','{"compute_cycles": 256.0, "memory_cycles": 768.0}',2.12043402633976633964e-02,3.74171399999999891865e+01,'{"lut": 38574.0, "ff": 26832.0, "bram36": 116.0, "dsp": 0.0, "logic_kind": "lut", "bram_kind": "bram36", "fits": true, "over": [], "utilization": {"lut": 72.50751879699249, "ff": 25.218045112781954, "bram36": 82.85714285714286, "dsp": 0.0}}',820.20825099994,2.12778789999674700084e+01,'2026-11-23 04:56:58.863514');
INSERT INTO "vt_candidates" VALUES(8,'dense_m16_k64_n64|3_3_5_0_4_4_15_15_18_17|oc_nthread=1,tile_b=8,tile_ci=1,tile_co=2','dense_m16_k64_n64','3_3_5_0_4_4_15_15_18_17','{"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0, "LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 15, "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17}','1x16x16-i32w256a128u32','{"tile_b": 8, "tile_ci": 1, "tile_co": 2, "oc_nthread": 1}','ok','',10867,0.00010867,'{"inp_load_nbytes": 2048, "wgt_load_nbytes": 8192, "acc_load_nbytes": 0, "uop_load_nbytes": 4, "out_store_nbytes": 1024, "gemm_counter": 256, "alu_counter": 192, "instructions": 78, "load_busy": 6840.0, "compute_busy": 3717.0, "store_busy": 1060.0}','{"compute_cycles": 256.0, "memory_cycles": 768.0}',7.06726787521855109863e-02,3.74171399999999891865e+01,'{"lut": 38574.0, "ff": 26832.0, "bram36": 116.0, "dsp": 0.0, "logic_kind": "lut", "bram_kind": "bram36", "fits": true, "over": [], "utilization": {"lut": 72.50751879699249, "ff": 25.218045112781954, "bram36": 82.85714285714286, "dsp": 0.0}}',1.28525253000020711624e+02,1.82639350000499689485e+01,'2026-11-23 04:56:59.048393');
INSERT INTO "vt_candidates" VALUES(9,'dense_m16_k64_n64|3_3_5_0_4_4_15_15_18_17|oc_nthread=1,tile_b=8,tile_ci=1,tile_co=1','dense_m16_k64_n64','3_3_5_0_4_4_15_15_18_17','{"LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5, "LOG_BATCH": 0, "LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 15, "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17}','1x16x16-i32w256a128u32','{"tile_b": 8, "tile_ci": 1, "tile_co": 1, "oc_nthread": 1}','ok','',19243,0.00019243,'{"inp_load_nbytes": 4096, "wgt_load_nbytes": 8192, "acc_load_nbytes": 0, "uop_load_nbytes": 4, "out_store_nbytes": 1024, "gemm_counter": 256, "alu_counter": 192, "instructions": 150, "load_busy": 12624.0, "compute_busy": 6277.0, "store_busy": 1692.0}','{"compute_cycles": 256.0, "memory_cycles": 768.0}',3.9910616847684869668e-02,3.74171399999999891865e+01,'{"lut": 38574.0, "ff": 26832.0, "bram36": 116.0, "dsp": 0.0, "logic_kind": "lut", "bram_kind": "bram36", "fits": true, "over": [], "utilization": {"lut": 72.50751879699249, "ff": 25.218045112781954, "bram36": 82.85714285714286, "dsp": 0.0}}',98.5620830000471,1.46277810000583485816e+01,'2026-11-23 04:56:59.196311');
CREATE TABLE vt_studies (
	id INTEGER NOT NULL, 
	name VARCHAR(255) NOT NULL, 
	workload VARCHAR(255) NOT NULL, 
	space JSON NOT NULL, 
	sampler VARCHAR(64) NOT NULL, 
	objective VARCHAR(64) NOT NULL, 
	board VARCHAR(64) NOT NULL, 
	seed BIGINT, 
	optuna_study_name VARCHAR(512) NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (name)
);
INSERT INTO "vt_studies" VALUES(1,'legacy','dense_m16_k64_n64','{"name": "dense", "workload": "dense_m16_k64_n64", "board": "pynq-z1", "objective": "area-latency", "hardware": {"LOG_BATCH": [0, 1, 2], "LOG_BLOCK_IN": [3, 4, 5], "LOG_BLOCK_OUT": [3, 4, 5], "LOG_INP_BUFF_SIZE": [13, 14, 15, 16], "LOG_WGT_BUFF_SIZE": [15, 16, 17, 18, 19], "LOG_ACC_BUFF_SIZE": [14, 15, 16, 17, 18], "LOG_INP_WIDTH": [3], "LOG_WGT_WIDTH": [3], "LOG_ACC_WIDTH": [5], "LOG_UOP_BUFF_SIZE": [15]}, "knobs": ["tile_b", "tile_ci", "tile_co", "oc_nthread"], "fit_board": true, "max_area_mm2": null, "source": "/work/wt/store/spaces/dense.toml"}','random','area-latency','pynq-z1',0,'legacy','2026-11-23 04:56:30.788016');
INSERT INTO "vt_studies" VALUES(2,'legacy-sched','dense_m16_k64_n64','{"name": "dense", "workload": "dense_m16_k64_n64", "board": "pynq-z1", "objective": "latency", "hardware": {"LOG_INP_WIDTH": [3], "LOG_WGT_WIDTH": [3], "LOG_ACC_WIDTH": [5], "LOG_BATCH": [0], "LOG_BLOCK_IN": [4], "LOG_BLOCK_OUT": [4], "LOG_UOP_BUFF_SIZE": [15], "LOG_INP_BUFF_SIZE": [15], "LOG_WGT_BUFF_SIZE": [18], "LOG_ACC_BUFF_SIZE": [17]}, "knobs": ["tile_b", "tile_ci", "tile_co", "oc_nthread"], "fit_board": true, "max_area_mm2": null, "source": "/work/wt/store/spaces/dense.toml"}','random','latency','pynq-z1',0,'legacy-sched','2026-11-23 04:56:48.094652');
CREATE TABLE vt_trials (
	id INTEGER NOT NULL, 
	study_id INTEGER NOT NULL, 
	number INTEGER NOT NULL, 
	candidate_id INTEGER NOT NULL, 
	sampler VARCHAR(64) NOT NULL, 
	params JSON NOT NULL, 
	cached BOOLEAN NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_vt_trials_study_number UNIQUE (study_id, number), 
	FOREIGN KEY(study_id) REFERENCES vt_studies (id) ON DELETE CASCADE, 
	FOREIGN KEY(candidate_id) REFERENCES vt_candidates (id)
);
INSERT INTO "vt_trials" VALUES(1,1,0,1,'random','{"LOG_BATCH": 1, "LOG_BLOCK_IN": 5, "LOG_BLOCK_OUT": 5, "LOG_INP_BUFF_SIZE": 14, "LOG_WGT_BUFF_SIZE": 15, "LOG_ACC_BUFF_SIZE": 16, "u_tile_b": 0.7805291762864555, "u_tile_ci": 0.11827442586893322, "u_tile_co": 0.6399210213275238, "oc_nthread": 2}',0,'2026-11-23 04:56:38.357990');
INSERT INTO "vt_trials" VALUES(2,1,1,2,'random','{"LOG_BATCH": 0, "LOG_BLOCK_IN": 3, "LOG_BLOCK_OUT": 4, "LOG_INP_BUFF_SIZE": 14, "LOG_WGT_BUFF_SIZE": 16, "LOG_ACC_BUFF_SIZE": 18, "u_tile_b": 0.43860151346232035, "u_tile_ci": 0.9883738380592262, "u_tile_co": 0.10204481074802807, "oc_nthread": 1}',0,'2026-11-23 04:56:38.371968');
INSERT INTO "vt_trials" VALUES(3,1,2,3,'random','{"LOG_BATCH": 0, "LOG_BLOCK_IN": 3, "LOG_BLOCK_OUT": 3, "LOG_INP_BUFF_SIZE": 16, "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 14, "u_tile_b": 0.11872771895424405, "u_tile_ci": 0.317983179393976, "u_tile_co": 0.41426299451466997, "oc_nthread": 2}',0,'2026-11-23 04:56:38.380668');
INSERT INTO "vt_trials" VALUES(4,1,3,4,'random','{"LOG_BATCH": 0, "LOG_BLOCK_IN": 5, "LOG_BLOCK_OUT": 4, "LOG_INP_BUFF_SIZE": 13, "LOG_WGT_BUFF_SIZE": 16, "LOG_ACC_BUFF_SIZE": 15, "u_tile_b": 0.5722519057908734, "u_tile_ci": 0.2230816326406183, "u_tile_co": 0.952749011516985, "oc_nthread": 2}',0,'2026-11-23 04:56:38.431375');
INSERT INTO "vt_trials" VALUES(5,1,4,5,'random','{"LOG_BATCH": 2, "LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 3, "LOG_INP_BUFF_SIZE": 14, "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 14, "u_tile_b": 0.5908727612481732, "u_tile_ci": 0.5743252488495788, "u_tile_co": 0.6532008198571336, "oc_nthread": 1}',0,'2026-11-23 04:56:38.671680');
INSERT INTO "vt_trials" VALUES(6,1,5,6,'random','{"LOG_BATCH": 0, "LOG_BLOCK_IN": 3, "LOG_BLOCK_OUT": 4, "LOG_INP_BUFF_SIZE": 13, "LOG_WGT_BUFF_SIZE": 17, "LOG_ACC_BUFF_SIZE": 18, "u_tile_b": 0.8663823259286292, "u_tile_ci": 0.9755215050028858, "u_tile_co": 0.855803342392611, "oc_nthread": 2}',0,'2026-11-23 04:56:38.686558');
INSERT INTO "vt_trials" VALUES(7,2,0,7,'random','{"u_tile_b": 0.5488135039273248, "u_tile_ci": 0.7151893663724195, "u_tile_co": 0.6027633760716439, "oc_nthread": 1}',0,'2026-11-23 04:56:58.875749');
INSERT INTO "vt_trials" VALUES(8,2,1,8,'random','{"u_tile_b": 0.6458941130666561, "u_tile_ci": 0.4375872112626925, "u_tile_co": 0.8917730007820798, "oc_nthread": 1}',0,'2026-11-23 04:56:59.050814');
INSERT INTO "vt_trials" VALUES(9,2,2,9,'random','{"u_tile_b": 0.7917250380826646, "u_tile_ci": 0.5288949197529045, "u_tile_co": 0.5680445610939323, "oc_nthread": 1}',0,'2026-11-23 04:56:59.198422');
CREATE INDEX ix_vt_candidates_workload ON vt_candidates (workload);
CREATE INDEX ix_vt_trials_candidate_id ON vt_trials (candidate_id);
COMMIT;
