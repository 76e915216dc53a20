"""OCI images as task environments, without a daemon.

An image is named by a source (:mod:`.sources`): an OCI layout folder, a ``docker save``
archive, a registry reference, or a Dockerfile. :mod:`.cache` copies it with ``skopeo`` into one
content-addressed OCI layout, unpacks it once per manifest digest with ``umoci`` into a
read-only root file system, and reads its config (env, working folder, user) into an
:class:`~harnessdrive.sandbox.image_root.ImageRoot` the bubblewrap sandbox shows as the system.
"""

from harnessdrive.environments.oci.cache import ImageCache, default_cache_dir, resolve_image

__all__ = ["ImageCache", "default_cache_dir", "resolve_image"]
