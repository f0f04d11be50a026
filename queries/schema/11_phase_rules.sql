-- @table phase_rules  Training-phase classification for the cross-thread critical path (algorithm := 'ctda'): an
-- event's phase is that of the first rule (lowest priority) whose pattern matches its name, else its innermost
-- classified enclosing event's on the same thread. Edit the rows to teach tracesql a framework's markers, e.g.
-- INSERT INTO phase_rules VALUES (5, '^my_train_loop\.fetch', 'DataLoad').
-- @column priority  Lower wins (NULL: after every other rule); between rules of one priority, the first pattern in sort order
-- @column pattern   Regular expression searched in the event name (RE2; anchor with ^ for a prefix)
-- @column phase     DataLoad, Forward, Loss, Backward, Communication or Update (any text is accepted)
CREATE TABLE IF NOT EXISTS phase_rules (priority INTEGER, pattern VARCHAR, phase VARCHAR);

-- Seeded once, from the names PyTorch writes: DataLoader iteration (record_function and its Python frames),
-- collectives (NCCL/RCCL/Gloo record_functions and c10d ops), the autograd engine, *Backward nodes and *_backward
-- ops (before loss, so NllLossBackward0 and aten::nll_loss_backward are Backward), loss ops and modules, optimizer steps, then forward markers (module frames, HTA's "## forward ##").
INSERT INTO phase_rules
SELECT * FROM (VALUES
    (10, '^enumerate\(DataLoader\)', 'DataLoad'),
    (11, 'torch/utils/data/', 'DataLoad'),
    (12, '(?i)dataloader', 'DataLoad'),
    (20, '^nccl:|^gloo:|^c10d::|^record_param_comms$|ProcessGroup|^nccl[A-Z]|^rccl', 'Communication'),
    (30, '^autograd::engine::evaluate_function|^## backward ##|Backward[0-9]*$|: backward$|_engine_run_backward|_backward', 'Backward'),
    (40, '(?i)loss', 'Loss'),
    (50, '^Optimizer\.(step|zero_grad)#|^## optimizer ##|torch/optim/', 'Update'),
    (60, '^## forward ##|^nn\.Module: |: forward$|\(forward\)', 'Forward')
) v(priority, pattern, phase)
WHERE NOT EXISTS (SELECT 1 FROM phase_rules);
