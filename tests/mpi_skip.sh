# Sourced by the MPI tests after `mpirun=$2`: exits 77 (ctest's skip) where kalah was built
# without MPI (MPIRUN is no-mpi-build) or no mpirun was found (MPIRUN empty or not a
# command).
if [ "$mpirun" = "no-mpi-build" ]; then
    echo "kalah built without MPI (cmake -DKALAH_MPI=ON builds it): skipped"
    exit 77
fi
if [ -z "$mpirun" ] || ! command -v "$mpirun" >/dev/null; then
    echo "mpirun not found (apt-get install openmpi-bin libopenmpi-dev): skipped"
    exit 77
fi
