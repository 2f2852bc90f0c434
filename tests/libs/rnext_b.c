int gt_probe_sym(void);
int gt_probe_sym(void) { return 2; }
