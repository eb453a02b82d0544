//! The movejit runtime: layouts, values, natives, storage, gas, limits and errors shared by both executors.
