"""Layer 13 helpers: everything behind ``minitorch train``, ``evaluate`` and ``predict``.

One small module per job, so each can be read on its own:

* :mod:`.models`     LeNet, an MLP, and the small MLP of the 2-D tasks
* :mod:`.data`       the training and test tensors of each task
* :mod:`.train`      the training loop, with exact resume after Ctrl-C
* :mod:`.interrupt`  holding Ctrl-C back while a step is applied
* :mod:`.checkpoint` what a checkpoint holds; reading one without surprises
* :mod:`.resume`     what ``--resume`` does with the other options
* :mod:`.progress`   an honest ETA and the "compiling kernels" notice
* :mod:`.checks`     checks of paths, devices and options before any work
* :mod:`.evaluate`   accuracy, loss and confusion matrix of a model
* :mod:`.features`   activations captured with forward hooks
* :mod:`.predict`    reading your own images (with :mod:`.png`) for a model
* :mod:`.plots`      the figures (matplotlib, optional)
"""
