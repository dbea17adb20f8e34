"""Optimizer steps, whole training steps (time and peak memory), and accuracy after N steps."""

from .common import bench, warmed_up


class OptimizerStep:
    """``optimizer.step()`` over LeNet's parameters (about 62k), their gradients filled in."""

    params = ["sgd", "sgd_momentum", "adam", "adamw", "rmsprop", "adagrad"]
    param_names = ["optimizer"]

    def setup(self, optimizer):
        self.fn = warmed_up("optimizer_step", optimizer)

    def time_step(self, optimizer):
        self.fn()


class TrainingStep:
    """One step of ``minitorch train mnist``: zero_grad, forward, cross-entropy, backward, Adam.

    ``peakmem_step`` is the peak resident memory of the whole benchmark
    process (imports, model and the step), as asv measures it.
    """

    params = (["lenet", "mlp"], [16, 64])
    param_names = ["model", "batch"]
    timeout = 600

    def setup(self, model, batch):
        self.fn = warmed_up("training_step", model, batch)

    def time_step(self, model, batch):
        self.fn()

    def peakmem_step(self, model, batch):
        self.fn()


class CompiledTrainingStep:
    """``TrainingStep`` with the model through ``minitorch.compile`` (traced, replayed, fused).

    Compare with ``TrainingStep`` of the same commit: what the compiler buys.
    """

    params = (["lenet", "mlp"], [16, 64])
    param_names = ["model", "batch"]
    timeout = 600

    def setup(self, model, batch):
        self.fn = warmed_up("training_step", model, batch, compiled=True)

    def time_step(self, model, batch):
        self.fn()


class Accuracy:
    """Test accuracy after ``steps`` Adam steps (batch 64) on the shipped MNIST subset.

    Seeded, so it changes only when the numbers minitorch computes change: a
    drop flags a correctness regression that a speed-up may have caused.
    """

    params = (["lenet", "mlp"], [50])
    param_names = ["model", "steps"]
    timeout = 900
    unit = "accuracy"

    def setup(self, model, steps):
        if bench is None:
            raise NotImplementedError("this commit has no minitorch.bench")

    def track_test_accuracy(self, model, steps):
        from minitorch.demos.train import TrainConfig, train
        cfg = TrainConfig(task="mnist", model=model, epochs=1, batch_size=64,
                          limit=64 * steps, schedule="none", seed=0)
        return train(cfg, echo=lambda line: None)[-1]["test_acc"]
