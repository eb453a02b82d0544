//! The reference interpreter of movejit.
