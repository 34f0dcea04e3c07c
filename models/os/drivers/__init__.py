"""``drivers/``: the NVMe PCI driver (``drivers/nvme/host/pci.c``) and vfio-pci
(``drivers/vfio/pci``), which hands a controller to a user-space driver."""
