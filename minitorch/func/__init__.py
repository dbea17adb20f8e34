"""``minitorch.func``: composable function transforms (PyTorch's ``torch.func``).

* :func:`grad`, :func:`grad_and_value`: gradients of scalar functions;
* :func:`vjp`, :func:`jvp`: vector-Jacobian and Jacobian-vector products;
* :func:`jacrev`, :func:`jacfwd`, :func:`hessian`: whole Jacobians and Hessians;
* :func:`vmap`: map a function over a batch dimension (a loop here);
* :func:`functional_call`, :func:`stack_module_state`: modules as functions
  of their parameters.

All are built on minitorch's reverse-mode engine (see each module); they
compose: ``grad(grad(f))``, ``jacfwd(jacrev(f))``, ``vmap(grad(f))``.
"""

from .eager_transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from .functional_call import functional_call, stack_module_state
from .vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state"]
